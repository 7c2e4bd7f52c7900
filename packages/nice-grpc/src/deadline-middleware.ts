import {
  type Clock,
  checkOptions,
  DeadlineExceededError,
  type Duration,
  isDeadlineExceededError,
  type KnownKeys,
  optionPath,
  parseDuration,
  type Sleep,
  systemClock,
  systemSleep,
  type TimeoutOptions,
  withTimeout,
} from '@breakwater/core';
import {
  type CallOptions,
  ClientError,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { deadlineAt, withTimeoutHeader } from './internals/deadline.js';
import { abortErrorFor, isAbortError, refusal } from './internals/errors.js';
import { type MiddlewareResult, type StreamNext, streamNext } from './internals/next.js';
import { runAlone, type UnaryStage } from './internals/unary-stage.js';

/** Per-call options of {@link deadlineMiddleware} (the same as `nice-grpc-client-middleware-deadline`'s). */
export interface DeadlineCallOptions {
  /** Deadline of the call: a `Date`, or ms from now; a middleware budget that ends earlier wins. Defaults to the middleware's budget. */
  deadline?: Date | number;
}

/** Options of {@link deadlineMiddleware}. */
export interface DeadlineMiddlewareOptions {
  /** Time budget of every call without a per-method one. Defaults to none (calls keep the caller's deadline). */
  timeout?: Duration;
  /** Budgets by full method path (`/pkg.Service/Method`) or service (`pkg.Service`). Defaults to none. */
  methods?: Readonly<Record<string, Duration>>;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How the deadline is waited for. Defaults to a shared host timer. */
  sleep?: Sleep;
}

/** Keys of {@link DeadlineMiddlewareOptions}. @internal */
export const DEADLINE_KEYS = {
  timeout: true,
  methods: true,
  clock: true,
  sleep: true,
} as const satisfies KnownKeys<DeadlineMiddlewareOptions>;

function budgets(options: DeadlineMiddlewareOptions): (path: string) => number | undefined {
  checkOptions(undefined, options, DEADLINE_KEYS, '', false);
  const fallback =
    options.timeout === undefined ? undefined : parseDuration('timeout', options.timeout);
  const byKey = new Map<string, number>();
  for (const [key, value] of Object.entries(options.methods ?? {})) {
    byKey.set(key, parseDuration(`methods["${key}"]`, value));
  }
  if (byKey.size === 0) return () => fallback;
  const resolved = new Map<string, number | undefined>();
  return (path) => {
    if (resolved.has(path)) return resolved.get(path);
    const budget = byKey.get(path) ?? byKey.get(path.slice(1, path.lastIndexOf('/'))) ?? fallback;
    resolved.set(path, budget);
    return budget;
  };
}

/**
 * Gives calls a deadline — the caller's `deadline` option or a per-method /
 * default budget, whichever ends first — that the server observes: nice-grpc
 * passes grpc-js no call options, so the deadline travels as the
 * `grpc-timeout` request header (what grpc-js itself would send), and the
 * retry and hedging middleware below re-send the time left on each attempt.
 * On the client the call is cancelled when the deadline passes and rejects
 * with a `ClientError` `DEADLINE_EXCEEDED` whose `cause` is the core
 * `DeadlineExceededError`; an expired deadline never starts the call. The
 * server enforces the same deadline, and when its timer fires first the
 * call rejects with the same shape (the server's error is the core error's
 * `cause`), so `err.cause` tells a deadline whichever side noticed it. Layers
 * below see the deadline as a `Date` in the `deadline` option, and their
 * signal aborts with the `DeadlineExceededError` as its reason.
 * @example
 * const client = createClientFactory().use(deadlineMiddleware({ timeout: '2s' })).create(def, channel);
 * await client.unary(request, { deadline: 500 });
 */
export function deadlineMiddleware(
  options: DeadlineMiddlewareOptions = {},
): ClientMiddleware<DeadlineCallOptions> {
  return deadlineMiddlewareOf(
    optionPath('', () => deadlineStage(options, true), 'deadlineMiddleware'),
  );
}

/** {@link deadlineMiddleware} around its stage (shared with `resilienceMiddleware`). @internal */
export function deadlineMiddlewareOf(stage: DeadlineStage): ClientMiddleware<DeadlineCallOptions> {
  const { budgetFor, clock, sleep } = stage;
  return async function* deadlineMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & DeadlineCallOptions,
  ): MiddlewareResult<Response> {
    if (!call.responseStream) {
      return await runAlone(stage, call, callOptions);
    }
    const { deadline, ...rest } = callOptions;
    const path = call.method.path;
    const now = clock();
    const at = callDeadline(deadline, budgetFor(path), now, clock);
    if (at === Number.POSITIVE_INFINITY) return yield* call.next(call.request, rest);
    const timeoutMs = at - now;
    if (timeoutMs <= 0) {
      throw refusal(path, Status.DEADLINE_EXCEEDED, new DeadlineExceededError(timeoutMs));
    }
    const metadata = withTimeoutHeader(rest.metadata, timeoutMs);
    const down = Object.assign(rest, { deadline: absoluteDeadline(deadline, at), metadata });
    yield* guardStream(streamNext(call), call.request, down, path, timeoutMs, sleep);
  };
}

/** Epoch ms the call must end by: the caller's deadline or the budget, whichever ends first. */
function callDeadline(
  deadline: Date | number | undefined,
  budget: number | undefined,
  now: number,
  clock: Clock,
): number {
  const at = deadlineAt(deadline, clock);
  return budget !== undefined && now + budget < at ? now + budget : at;
}

/** The `deadline` option passed down: the caller's own `Date` when it is the one that holds. */
function absoluteDeadline(deadline: Date | number | undefined, at: number): Date {
  return deadline instanceof Date && deadline.getTime() === at ? deadline : new Date(at);
}

/** The unary part of {@link deadlineMiddleware}, with what its stream path shares. @internal */
export interface DeadlineStage extends UnaryStage {
  budgetFor(path: string): number | undefined;
  clock: Clock;
  sleep: Sleep;
  /**
   * {@link UnaryStage.unary} without the last step, {@link DeadlineStage.translate}:
   * a caller that already catches (the resilience middleware's generator)
   * translates itself and saves an async step per call.
   */
  untranslated: UnaryStage['unary'];
  /**
   * An error out of {@link DeadlineStage.untranslated} in the words nice-grpc
   * callers expect: a deadline — `withTimeout`'s, or the server's
   * `DEADLINE_EXCEEDED` on a call this stage gave a deadline — as a
   * `DEADLINE_EXCEEDED` `ClientError` with the core `DeadlineExceededError`
   * as `cause`, and, once the caller's `signal` has aborted, an `AbortError`.
   */
  translate(error: unknown, path: string, options: CallOptions & DeadlineCallOptions): unknown;
}

/**
 * The unary stage of {@link deadlineMiddleware}. With `stamp` false it
 * leaves `grpc-timeout` to the retry stage below, which writes the time left
 * on every call (attempt or pass-through), so the header is set once.
 * @internal
 */
export function deadlineStage(options: DeadlineMiddlewareOptions, stamp: boolean): DeadlineStage {
  const budgetFor = budgets(options);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const untranslated: UnaryStage['unary'] = (call, callOptions, chain, index) => {
    // Passed on with every key: the one this stage owns, `deadline`, is overwritten below.
    const options = callOptions as CallOptions & DeadlineCallOptions;
    const deadline = options.deadline;
    const path = call.method.path;
    const now = clock();
    const at = callDeadline(deadline, budgetFor(path), now, clock);
    if (at === Number.POSITIVE_INFINITY) return chain.next(call, options, index);
    const timeoutMs = at - now;
    if (timeoutMs <= 0) {
      return Promise.reject(
        refusal(path, Status.DEADLINE_EXCEEDED, new DeadlineExceededError(timeoutMs)),
      );
    }
    const metadata = stamp ? withTimeoutHeader(options.metadata, timeoutMs) : undefined;
    const absolute = absoluteDeadline(deadline, at);
    const signal = options.signal;
    const timeout: TimeoutOptions =
      signal === undefined ? { timeoutMs, sleep } : { timeoutMs, signal, sleep };
    return withTimeout((s) => {
      // Object.assign, not a spread: Node 20's V8 takes a slow path (about 1 µs
      // per key) to add keys the spread source lacks to a spread copy.
      const down: CallOptions & DeadlineCallOptions = Object.assign(
        {},
        options,
        metadata === undefined
          ? { deadline: absolute, signal: s }
          : { deadline: absolute, metadata, signal: s },
      );
      return chain.next(call, down, index);
    }, timeout);
  };
  const translate: DeadlineStage['translate'] = (error, path, options) => {
    const signal = options.signal;
    if (signal?.aborted) return isAbortError(error) ? error : abortErrorFor(signal);
    if (isDeadlineExceededError(error)) return refusal(path, Status.DEADLINE_EXCEEDED, error);
    if (!isPeerDeadline(error)) return error;
    // Only a call this stage gave a deadline: otherwise the status is someone else's deadline.
    const budget = budgetFor(path);
    const deadline = options.deadline;
    if (budget === undefined && deadline === undefined) return error;
    const relative = typeof deadline === 'number' ? deadline : undefined;
    const timeoutMs =
      budget === undefined || (relative !== undefined && relative < budget) ? relative : budget;
    return peerDeadline(error, path, timeoutMs);
  };
  return {
    budgetFor,
    clock,
    sleep,
    untranslated,
    translate,
    async unary(call, callOptions, chain, index) {
      try {
        return await untranslated(call, callOptions, chain, index);
      } catch (error) {
        throw translate(error, call.method.path, callOptions as CallOptions & DeadlineCallOptions);
      }
    },
  };
}

/**
 * A `DEADLINE_EXCEEDED` from below that no Breakwater stage explained: the
 * server's (or grpc-js's) timer for the deadline this call sent fired before
 * ours did. Under load either timer may win the race by a few ms.
 */
function isPeerDeadline(error: unknown): error is ClientError {
  return (
    error instanceof ClientError &&
    error.code === Status.DEADLINE_EXCEEDED &&
    !isDeadlineExceededError((error as { cause?: unknown }).cause)
  );
}

/** The error our own timer would have given, with the peer's `DEADLINE_EXCEEDED` as the core error's cause. */
function peerDeadline(
  error: ClientError,
  path: string,
  timeoutMs: number | undefined,
): ClientError {
  return refusal(
    path,
    Status.DEADLINE_EXCEEDED,
    new DeadlineExceededError(timeoutMs, { cause: error }),
  );
}

/** A response stream cancelled when the deadline passes. */
async function* guardStream<Response>(
  next: StreamNext<Response>,
  request: unknown,
  options: CallOptions,
  path: string,
  timeoutMs: number,
  sleep: Sleep,
): AsyncGenerator<Response, void, undefined> {
  const caller = options.signal;
  const controller = new AbortController();
  const timer = new AbortController();
  const forward = () => controller.abort(caller?.reason);
  if (caller?.aborted) forward();
  else caller?.addEventListener('abort', forward, { once: true });
  const expired = new DeadlineExceededError(timeoutMs);
  void sleep(timeoutMs, timer.signal).then(() => {
    if (!timer.signal.aborted) controller.abort(expired);
  });
  try {
    yield* next(request, Object.assign({}, options, { signal: controller.signal }));
  } catch (error) {
    if (controller.signal.reason === expired)
      throw refusal(path, Status.DEADLINE_EXCEEDED, expired);
    throw isPeerDeadline(error) ? peerDeadline(error, path, timeoutMs) : error;
  } finally {
    timer.abort();
    caller?.removeEventListener('abort', forward);
  }
}
