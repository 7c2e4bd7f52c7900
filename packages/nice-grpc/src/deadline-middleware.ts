import { DeadlineExceededError, isDeadlineExceededError, withTimeout } from '@breakwater/core';
import {
  checkOptions,
  keysOf,
  onAbort,
  resolveResilience,
  telemetryScopeOf,
} from '@breakwater/core/internal';
import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import {
  type CallOptions,
  ClientError,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { deadlineAt, withTimeoutHeader } from './internals/deadline.js';
import { abortErrorFor, callOptionError, isAbortError, refusal } from './internals/errors.js';
import {
  callNext,
  type MiddlewareResult,
  type StreamNext,
  stepMiddleware,
  streamNext,
  type UnaryStep,
} from './internals/next.js';

/** Per-call options of {@link deadlineMiddleware} (the same as `nice-grpc-client-middleware-deadline`'s). */
export interface DeadlineCallOptions {
  /** Deadline of the call: a `Date`, or ms from now; a middleware `timeoutMs` that ends earlier wins. Defaults to the middleware's `timeoutMs`. */
  deadline?: Date | number;
}

/** Options of {@link deadlineMiddleware}: the `timeoutMs` part of the vocabulary. */
export interface DeadlineMiddlewareOptions {
  /** Deadline of every call in ms (all its attempts and waits); a caller `deadline` that ends earlier wins. Defaults to none (calls keep the caller's deadline). */
  timeoutMs?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How the deadline is waited for. Defaults to a shared host timer. */
  sleep?: Sleep;
}

const DEADLINE_KEYS = keysOf<DeadlineMiddlewareOptions>()(['timeoutMs', 'clock', 'sleep']);

/**
 * Gives calls a deadline — the caller's `deadline` option or `timeoutMs`,
 * whichever ends first — that the server observes: nice-grpc passes grpc-js
 * no call options, so the deadline travels as the `grpc-timeout` request
 * header (what grpc-js itself would send), and the retry and hedging
 * middleware below re-send the time left on each attempt. On the client the
 * call is cancelled when the deadline passes and rejects with a
 * `ClientError` `DEADLINE_EXCEEDED` whose `cause` is the core
 * `DeadlineExceededError`; an expired deadline never starts the call. The
 * server enforces the same deadline, and when its timer fires first the call
 * rejects with the same shape (the server's error is the core error's
 * `cause`), so `err.cause` tells a deadline whichever side noticed it. Layers
 * below see the deadline as a `Date` in the `deadline` option, and their
 * signal aborts with the `DeadlineExceededError` as its reason.
 * @example
 * const client = createClientFactory().use(deadlineMiddleware({ timeoutMs: 2_000 })).create(def, channel);
 * await client.unary(request, { deadline: 500 });
 */
export function deadlineMiddleware(
  options: DeadlineMiddlewareOptions = {},
): ClientMiddleware<DeadlineCallOptions> {
  const fn = 'deadlineMiddleware';
  checkOptions(fn, options, DEADLINE_KEYS);
  const plan = resolveResilience(fn, '', options, false);
  const settings: DeadlineSettings = {
    timeoutMs: plan.timeoutMs,
    clock: options.clock ?? systemClock,
    sleep: options.sleep ?? systemSleep,
    stamp: true,
  };
  return stepMiddleware(deadlineStep(settings, callNext), deadlineStream(settings));
}

/**
 * What the deadline stage of every call shares: `timeoutMs` (`Infinity` for
 * none), its clock and sleep. With `stamp` false it leaves `grpc-timeout` to
 * the retry stage below, which writes the time left on every attempt.
 * @internal
 */
export interface DeadlineSettings {
  timeoutMs: number;
  clock: Clock;
  sleep: Sleep;
  stamp: boolean;
}

/**
 * The deadline stage of a call without a response stream: the call below
 * runs under `withTimeout`, with the deadline's signal.
 * @internal
 */
export function deadlineStep(s: DeadlineSettings, below: UnaryStep): UnaryStep {
  // Not an async function: its frame would cost about 400 B a call.
  return function deadline<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & DeadlineCallOptions,
  ): Promise<Response> {
    const now = s.clock();
    const at = callDeadline(call.method.path, callOptions.deadline, s.timeoutMs, now, s.clock);
    if (at === Number.POSITIVE_INFINITY) return below(call, callOptions);
    const left = at - now;
    const down = downOptions(s, call, callOptions, at, left);
    const signal = callOptions.signal;
    return withTimeout(
      (timed) => {
        down.signal = timed;
        return below(call, down);
      },
      signal === undefined
        ? { timeoutMs: left, sleep: s.sleep }
        : { timeoutMs: left, signal, sleep: s.sleep },
    ).then(undefined, (error: unknown) => {
      throw translate(error, call.method.path, signal, left);
    });
  };
}

/**
 * The deadline stage of a response stream: the stream is cancelled when the
 * deadline passes.
 * @internal
 */
export function deadlineStream(s: DeadlineSettings): ClientMiddleware<DeadlineCallOptions> {
  return async function* deadlineMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & DeadlineCallOptions,
  ): MiddlewareResult<Response> {
    const now = s.clock();
    const at = callDeadline(call.method.path, callOptions.deadline, s.timeoutMs, now, s.clock);
    if (at === Number.POSITIVE_INFINITY) return yield* call.next(call.request, callOptions);
    const left = at - now;
    const down = downOptions(s, call, callOptions, at, left);
    return yield* guardStream(
      streamNext(call),
      call.request,
      down,
      call.method.path,
      left,
      s.sleep,
    );
  };
}

/**
 * The options below the deadline stage: the deadline as a `Date` (and
 * `grpc-timeout` when the stage stamps it). An expired deadline never
 * starts the call.
 */
function downOptions<Request, Response>(
  s: DeadlineSettings,
  call: ClientMiddlewareCall<Request, Response>,
  callOptions: CallOptions & DeadlineCallOptions,
  at: number,
  left: number,
): CallOptions & DeadlineCallOptions {
  if (left <= 0) {
    // Never started: a refusal for telemetry, not a deadline that passed during the call.
    const scope = telemetryScopeOf(callOptions);
    if (scope !== undefined) scope.refusal = 'deadline-expired';
    const given = callOptions.deadline;
    const shown = given instanceof Date ? given.toISOString() : `${given} ms`;
    const message = `Deadline ${shown} had already passed when the call started: not sent`;
    throw refusal(
      call.method.path,
      Status.DEADLINE_EXCEEDED,
      new DeadlineExceededError(left, { message }),
    );
  }
  // Object.assign, not a spread: Node 20's V8 takes a slow path (about 1 µs
  // per key) to add keys the spread source lacks to a spread copy.
  const down: CallOptions & DeadlineCallOptions = Object.assign({}, callOptions, {
    deadline: absoluteDeadline(callOptions.deadline, at),
  });
  if (s.stamp) down.metadata = withTimeoutHeader(callOptions.metadata, left);
  return down;
}

/**
 * Epoch ms the call must end by: the caller's deadline or the budget, whichever
 * ends first. A `deadline` that is no time at all (`NaN`, a string) is the
 * call's `INVALID_ARGUMENT`.
 */
function callDeadline(
  path: string,
  deadline: Date | number | undefined,
  timeoutMs: number,
  now: number,
  clock: Clock,
): number {
  const valid =
    deadline === undefined ||
    (deadline instanceof Date
      ? !Number.isNaN(deadline.getTime())
      : typeof deadline === 'number' && !Number.isNaN(deadline));
  if (!valid) {
    throw callOptionError(
      path,
      new TypeError(`deadline must be a Date or a number of ms from now, got ${String(deadline)}`),
    );
  }
  const at = deadlineAt(deadline, clock);
  return Math.min(now + timeoutMs, at);
}

/** The `deadline` option passed down: the caller's own `Date` when it is the one that holds. */
function absoluteDeadline(deadline: Date | number | undefined, at: number): Date {
  return deadline instanceof Date && deadline.getTime() === at ? deadline : new Date(at);
}

/**
 * An error from below in the words nice-grpc callers expect: a deadline —
 * `withTimeout`'s, or the server's `DEADLINE_EXCEEDED` on this call — as a
 * `DEADLINE_EXCEEDED` `ClientError` with the core `DeadlineExceededError` as
 * `cause`, and, once the caller's `signal` has aborted, an `AbortError`.
 */
function translate(
  error: unknown,
  path: string,
  signal: AbortSignal | undefined,
  timeoutMs: number,
): unknown {
  if (signal?.aborted) return isAbortError(error) ? error : abortErrorFor(signal);
  if (isDeadlineExceededError(error)) {
    return refusal(path, Status.DEADLINE_EXCEEDED, callDeadlineError(timeoutMs, error));
  }
  return isPeerDeadline(error) ? peerDeadline(error, path, timeoutMs) : error;
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
function peerDeadline(error: ClientError, path: string, timeoutMs: number): ClientError {
  return refusal(path, Status.DEADLINE_EXCEEDED, callDeadlineError(timeoutMs, error));
}

/** The call's own deadline passed (not an attempt's: those say so themselves). */
function callDeadlineError(timeoutMs: number, cause?: unknown): DeadlineExceededError {
  const message = `Call deadline of ${Math.round(timeoutMs)} ms exceeded`;
  return new DeadlineExceededError(
    timeoutMs,
    cause === undefined ? { message } : { message, cause },
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
  const stopForwarding =
    caller === undefined ? undefined : onAbort(caller, () => controller.abort(caller.reason));
  const expired = callDeadlineError(timeoutMs);
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
    stopForwarding?.();
  }
}
