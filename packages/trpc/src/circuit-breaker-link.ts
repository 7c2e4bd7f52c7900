import {
  type CallOutcome,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  CircuitOpenError,
  type CircuitStateChange,
  checkOptions,
  createCircuitBreaker,
  type ErrorVerdict,
  type KnownKeys,
  optionPath,
  optionTypeError,
  systemClock,
} from '@breakwater/core';
import type { Operation, OperationResultEnvelope, TRPCClientError, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { type Observer, observable, type Unsubscribable } from '@trpc/server/observable';
import { classifyTRPCError } from './classify.js';
import { refusal } from './internals/errors.js';
import { isAnswer } from './internals/results.js';

/** Options of {@link circuitBreakerLink}. */
export interface CircuitBreakerLinkOptions {
  /**
   * `'link'`: one circuit for everything behind this link (one endpoint);
   * `'path'`: one circuit per procedure path. Defaults to `'link'`.
   */
  scope?: 'link' | 'path';
  /** An existing breaker to use (only with scope `'link'`), e.g. shared with other clients. Defaults to a new one built from `circuit`. */
  breaker?: CircuitBreaker;
  /** Settings of the breakers the link creates (threshold, open duration, windows...). Defaults to core's. */
  circuit?: CircuitBreakerOptions;
  /** Maps a failed call's error to a verdict; `countForCircuit: false` is neutral. Defaults to `classifyTRPCError`. */
  classify?: (error: unknown, op: Operation) => ErrorVerdict;
  /** Called on every state change of a breaker the link uses, with the circuit key (`'link'` or the path). Defaults to none. */
  onStateChange?: (
    event: CircuitStateChange & {
      /** The circuit that changed: `'link'`, or the procedure path with scope `'path'`. */
      key: string;
    },
  ) => void;
}

/** Keys of {@link CircuitBreakerLinkOptions}. @internal */
export const CIRCUIT_BREAKER_LINK_KEYS = {
  scope: true,
  breaker: true,
  circuit: true,
  classify: true,
  onStateChange: true,
} as const satisfies KnownKeys<CircuitBreakerLinkOptions>;

/**
 * Stops calling an unhealthy endpoint: when the circuit is open the call is
 * refused at once with a `TRPCClientError` whose `cause` is a core
 * `CircuitOpenError` (with `retryAfterMs`), and no request is sent. Outcomes
 * are judged by the classifier: failures counted, 4xx domain errors and
 * cancellations neutral. Uses the one core breaker state machine.
 * @example
 * circuitBreakerLink({ circuit: { failureThreshold: 5, openDurationMs: 10_000 } })
 */
export function circuitBreakerLink<TRouter extends AnyRouter = AnyRouter>(
  options: CircuitBreakerLinkOptions = {},
): TRPCLink<TRouter> {
  return circuitBreakerLinkFrom(resolveCircuits(options));
}

/** {@link circuitBreakerLink}'s breakers and options, built once. @internal */
export interface CircuitSettings {
  /** The breaker guarding calls to `path`. */
  breakerFor(path: string): CircuitBreaker;
  /** The circuit name a refusal of `path` reports, if any. */
  circuitName(path: string): string | undefined;
  classify: (error: unknown, op: Operation) => ErrorVerdict;
  clock: () => number;
}

/** Validates {@link CircuitBreakerLinkOptions} and sets up its breakers. @internal */
export function resolveCircuits(options: CircuitBreakerLinkOptions): CircuitSettings {
  const fn = 'circuitBreakerLink';
  checkOptions(fn, options, CIRCUIT_BREAKER_LINK_KEYS, '', false);
  const scope = options.scope ?? 'link';
  if (scope !== 'link' && scope !== 'path') {
    throw optionTypeError('scope', `must be 'link' or 'path', got ${String(scope)}`, fn);
  }
  if (options.breaker && scope === 'path') {
    throw optionTypeError('breaker', "can only be given with scope 'link'", fn);
  }
  // Per-path breakers are built on first use: build one now so bad `circuit` options throw here.
  if (scope === 'path') optionPath('circuit', () => createCircuitBreaker(options.circuit), fn);
  const make = (key: string, name: string | undefined): CircuitBreaker => {
    const breaker = createCircuitBreaker({ ...options.circuit, ...(name ? { name } : {}) });
    const listener = options.onStateChange;
    if (listener) breaker.onStateChange((e) => listener({ ...e, key }));
    return breaker;
  };
  const shared =
    scope === 'link'
      ? (options.breaker ?? optionPath('circuit', () => make('link', options.circuit?.name), fn))
      : undefined;
  if (options.breaker && options.onStateChange) {
    const listener = options.onStateChange;
    options.breaker.onStateChange((e) => listener({ ...e, key: 'link' }));
  }
  const byPath = new Map<string, CircuitBreaker>();
  const sharedName = options.circuit?.name;
  return {
    breakerFor(path) {
      if (shared) return shared;
      let breaker = byPath.get(path);
      if (!breaker) {
        breaker = make(path, path);
        byPath.set(path, breaker);
      }
      return breaker;
    },
    circuitName: (path) => (shared ? sharedName : path),
    classify: options.classify ?? classifyTRPCError,
    clock: options.circuit?.clock ?? systemClock,
  };
}

/** The refusal of a call to `path` by an open `breaker`. @internal */
export function circuitRefusal(
  settings: CircuitSettings,
  breaker: CircuitBreaker,
  path: string,
): TRPCClientError<AnyRouter> {
  const circuit = settings.circuitName(path);
  return refusal(
    new CircuitOpenError({
      retryAfterMs: breaker.retryAfterMs(),
      ...(circuit === undefined ? {} : { circuit }),
    }),
  );
}

/** {@link circuitBreakerLink} over settings already resolved. @internal */
export function circuitBreakerLinkFrom<TRouter extends AnyRouter>(
  settings: CircuitSettings,
): TRPCLink<TRouter> {
  const { classify, clock } = settings;
  return () => {
    // initialized in app
    return ({ op, next }) => {
      // initialized for request
      return observable((observer) => {
        const breaker = settings.breakerFor(op.path);
        const permit = breaker.tryAcquire();
        if (permit < 0) {
          observer.error(circuitRefusal(settings, breaker, op.path) as TRPCClientError<TRouter>);
          return;
        }
        const call = new CircuitCall(observer as Observer<Envelope, unknown>, op, classify);
        call.permit = permit;
        call.breaker = breaker;
        call.clock = clock;
        call.started = clock();
        call.subscription = next(op).subscribe(call);
        return call;
      });
    };
  };
}

type Envelope = OperationResultEnvelope<unknown, TRPCClientError<AnyRouter>>;

/**
 * One permitted call: the observer of the call below and its teardown, so a
 * call allocates no closures. The permit is released once.
 */
class CircuitCall implements Observer<Envelope, unknown> {
  permit = -1;
  breaker!: CircuitBreaker;
  clock!: () => number;
  started = 0;
  subscription: Unsubscribable | undefined = undefined;
  private released = false;

  constructor(
    private readonly observer: Observer<Envelope, unknown>,
    private readonly op: Operation,
    private readonly classify: (error: unknown, op: Operation) => ErrorVerdict,
  ) {}

  next(envelope: Envelope): void {
    if (isAnswer(envelope)) this.release('success');
    this.observer.next(envelope);
  }

  error(error: unknown): void {
    this.release(this.classify(error, this.op).countForCircuit === false ? 'neutral' : 'failure');
    this.observer.error(error);
  }

  complete(): void {
    this.release('success');
    this.observer.complete();
  }

  unsubscribe(): void {
    // Unsubscribed before an answer: the caller left, which says nothing about the server.
    this.release('neutral');
    this.subscription?.unsubscribe();
  }

  private release(outcome: CallOutcome): void {
    if (this.released) return;
    this.released = true;
    this.breaker.release(this.permit, outcome, this.clock() - this.started);
  }
}
