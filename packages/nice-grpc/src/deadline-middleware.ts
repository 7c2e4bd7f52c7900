import { setMaxListeners } from 'node:events';
import {
  type Clock,
  DeadlineExceededError,
  type Duration,
  isDeadlineExceededError,
  parseDuration,
  type Sleep,
  systemClock,
  systemSleep,
  type TimeoutOptions,
  withTimeout,
} from '@breakwater/core';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { deadlineAt, withTimeoutHeader } from './internals/deadline.js';
import { abortErrorFor, isAbortError, refusal } from './internals/errors.js';
import {
  type MiddlewareResult,
  type StreamNext,
  streamNext,
  unaryNext,
  unaryResult,
} from './internals/next.js';

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

function budgets(options: DeadlineMiddlewareOptions): (path: string) => number | undefined {
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
 * `DeadlineExceededError`; an expired deadline never starts the call. Layers
 * below see the deadline as a `Date` in the `deadline` option, and their
 * signal aborts with the `DeadlineExceededError` as its reason.
 * @example
 * const client = createClientFactory().use(deadlineMiddleware({ timeout: '2s' })).create(def, channel);
 * await client.unary(request, { deadline: 500 });
 */
export function deadlineMiddleware(
  options: DeadlineMiddlewareOptions = {},
): ClientMiddleware<DeadlineCallOptions> {
  const budgetFor = budgets(options);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  return async function* deadlineMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & DeadlineCallOptions,
  ): MiddlewareResult<Response> {
    const { deadline, ...rest } = callOptions;
    const path = call.method.path;
    const budget = budgetFor(path);
    const now = clock();
    let at = deadlineAt(deadline, clock);
    if (budget !== undefined && now + budget < at) at = now + budget;
    if (at === Number.POSITIVE_INFINITY) return yield* call.next(call.request, rest);
    const timeoutMs = at - now;
    if (timeoutMs <= 0) {
      throw refusal(path, Status.DEADLINE_EXCEEDED, new DeadlineExceededError(timeoutMs));
    }
    const metadata = withTimeoutHeader(rest.metadata, timeoutMs);
    const absolute =
      deadline instanceof Date && deadline.getTime() === at ? deadline : new Date(at);
    const signal = rest.signal;
    if (!call.responseStream) {
      const next = unaryNext(call);
      const timeout: TimeoutOptions =
        signal === undefined ? { timeoutMs, sleep } : { timeoutMs, signal, sleep };
      try {
        return await withTimeout((s) => {
          allowManyListeners(s);
          const down: CallOptions & DeadlineCallOptions = {
            ...rest,
            deadline: absolute,
            metadata,
            signal: s,
          };
          return unaryResult(next(call.request, down));
        }, timeout);
      } catch (error) {
        throw translate(error, path, signal);
      }
    }
    const down = { ...rest, deadline: absolute, metadata };
    yield* guardStream(streamNext(call), call.request, down, path, timeoutMs, sleep);
  };
}

let lastShared: AbortSignal | undefined;

/**
 * Calls due in the same millisecond share one withTimeout signal, and each
 * nice-grpc call listens on its signal: lift Node's 10-listener warning once
 * per shared signal (the warning builds a stack trace per signal).
 */
function allowManyListeners(signal: AbortSignal): void {
  if (signal === lastShared) return;
  lastShared = signal;
  setMaxListeners(0, signal);
}

/** withTimeout's own rejections, in the words nice-grpc callers expect. */
function translate(error: unknown, path: string, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return isAbortError(error) ? error : abortErrorFor(signal);
  if (isDeadlineExceededError(error)) return refusal(path, Status.DEADLINE_EXCEEDED, error);
  return error;
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
    yield* next(request, { ...options, signal: controller.signal });
  } catch (error) {
    throw controller.signal.reason === expired
      ? refusal(path, Status.DEADLINE_EXCEEDED, expired)
      : error;
  } finally {
    timer.abort();
    caller?.removeEventListener('abort', forward);
  }
}
