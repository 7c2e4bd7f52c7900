import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import type { CallOutcome, CircuitBreaker, CircuitBreakerOptions } from '../breaker/types.js';
import { CircuitOpenError } from '../errors/circuit-open-error.js';
import { checkOptions, keysOf, optionPath, optionTypeError } from '../internal/validate.js';
import { type Clock, systemClock } from '../time/clock.js';
import {
  createGrpcStatusClassifier,
  type GrpcStatusClassifier,
  provenNeverSent,
  type TrailerGetter,
} from './classifier.js';
import { GrpcStatus } from './status.js';

/** What one circuit guards: a `'method'`, a `'service'`, or the whole `'client'`. */
export type GrpcCircuitScope = 'method' | 'service' | 'client';

/**
 * The circuit key of a method path under `scope`: the path itself
 * (`/pkg.Service/Method`), its service (`pkg.Service`), or `'client'`.
 */
export function circuitScopeKey(scope: GrpcCircuitScope, path: string): string {
  return scope === 'method'
    ? path
    : scope === 'service'
      ? path.slice(1, path.lastIndexOf('/'))
      : 'client';
}

/** Circuit options shared by the grpc-js interceptor and the nice-grpc middleware. */
export interface GrpcCircuitOptions {
  /** One circuit per `'method'`, per `'service'`, or one for the whole `'client'`. Defaults to `'method'`. */
  scope?: GrpcCircuitScope;
  /** Settings of each circuit (core breaker options; name and clock are filled in). Defaults to the core defaults. */
  breaker?: Omit<CircuitBreakerOptions, 'name'>;
  /** Supplies the circuit for a scope key instead (e.g. shared with other clients). Defaults to one new breaker per key. */
  breakerFor?: (key: string) => CircuitBreaker;
  /** Status → verdict; only `countForCircuit` failures count. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Time source for call durations (slow-call rules). Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link GrpcCircuitOptions}. @internal */
export const GRPC_CIRCUIT_KEYS = keysOf<GrpcCircuitOptions>()([
  'scope',
  'breaker',
  'breakerFor',
  'classify',
  'clock',
]);

/** The circuit of one method path, shared by its calls. */
export interface GrpcMethodCircuit {
  /** The breaker guarding the path (shared by every path with the same key). */
  readonly breaker: CircuitBreaker;
  /** Full method path. */
  readonly path: string;
  /** Scope key of the circuit (see {@link circuitScopeKey}). */
  readonly key: string;
}

/** Circuits by method path, and how a finished call counts for them. */
export interface GrpcCircuits {
  /** The circuit of `path`, created on first use and cached per path. */
  methodCircuit(path: string): GrpcMethodCircuit;
  /** The breaker guarding `path` (created on first use). */
  circuitFor(path: string): CircuitBreaker;
  /** The error a call refused by `circuit` carries as its cause. */
  openError(circuit: GrpcMethodCircuit): CircuitOpenError;
  /**
   * How a finished call counts: `'success'` for `OK`, `'neutral'` for a status
   * the classifier does not count (or caller cancellation), else `'failure'`.
   * A half-open `probe` that found no connection (grpc-js's own
   * `UNAVAILABLE`: the request never left) is neutral too: it says nothing
   * about the server, and the next call may probe as soon as the channel
   * reconnects instead of a whole open duration later.
   */
  outcomeOf(
    path: string,
    code: number,
    details: string,
    trailer: TrailerGetter | undefined,
    cancelledByCaller: boolean,
    probe?: boolean,
  ): CallOutcome;
  /** The time source of call durations. */
  readonly clock: Clock;
}

/**
 * The circuit registry of both gRPC adapters: one breaker per scope key,
 * looked up once per method path, and the classifier that decides how a
 * status counts. Throws a `TypeError` for an unknown `scope`.
 */
export function createGrpcCircuits(options: GrpcCircuitOptions = {}): GrpcCircuits {
  checkOptions(undefined, options, GRPC_CIRCUIT_KEYS, '', false);
  const scope = options.scope ?? 'method';
  if (scope !== 'method' && scope !== 'service' && scope !== 'client') {
    throw optionTypeError(
      'scope',
      `must be one of 'method', 'service', 'client', got ${String(scope)}`,
    );
  }
  const clock = options.clock ?? systemClock;
  const classify = options.classify ?? createGrpcStatusClassifier();
  const make =
    options.breakerFor ??
    ((key: string) => createCircuitBreaker({ clock, ...options.breaker, name: key }));
  // Breakers are built on first use; build one now so bad `breaker` options throw here.
  if (options.breakerFor === undefined) optionPath('breaker', () => make('client'));
  const byKey = new Map<string, CircuitBreaker>();
  const byPath = new Map<string, GrpcMethodCircuit>();

  const methodCircuit = (path: string): GrpcMethodCircuit => {
    let method = byPath.get(path);
    if (method === undefined) {
      const key = circuitScopeKey(scope, path);
      let breaker = byKey.get(key);
      if (breaker === undefined) {
        breaker = make(key);
        byKey.set(key, breaker);
      }
      method = { breaker, path, key };
      byPath.set(path, method);
    }
    return method;
  };
  return {
    methodCircuit,
    circuitFor: (path) => methodCircuit(path).breaker,
    openError: ({ breaker, key }) =>
      new CircuitOpenError({ retryAfterMs: breaker.retryAfterMs(), circuit: key }),
    outcomeOf(path, code, details, trailer, cancelledByCaller, probe) {
      if (code === GrpcStatus.OK) return 'success';
      if (
        probe === true &&
        code === GrpcStatus.UNAVAILABLE &&
        provenNeverSent(details, trailer, false)
      ) {
        return 'neutral';
      }
      const verdict = classify({ path, code, details, trailer, cancelledByCaller });
      return verdict.countForCircuit === false ? 'neutral' : 'failure';
    },
    clock,
  };
}
