import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { DeadlineTimerError } from '../errors/deadline-timer-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { checkSignal } from '../internal/call-options.js';
import { onAbort } from '../internal/on-abort.js';
import { forwardOutcome, newPromiseInto, noSettler, type OutcomeSink } from '../internal/settle.js';
import { isThenable } from '../internal/thenable.js';
import { checkFunction, checkNumber, checkOptions, keysOf } from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import type { Deadline } from './deadline.js';
import { sharedTimerWheel, WheelEntry } from './timer-wheel.js';

/** Options of {@link withTimeout}. */
export interface TimeoutOptions {
  /** Time `op` may take, in ms (>= 0); `Infinity` for none. Required unless `deadline` is given. */
  timeoutMs?: number;
  /** An absolute deadline (e.g. propagated from a caller); the earlier of it and `timeoutMs` applies. Defaults to none. */
  deadline?: Deadline;
  /** Caller cancellation. Defaults to none. */
  signal?: AbortSignal;
  /** Waits out the timeout (a manual clock's sleep in tests). Defaults to a shared host timer. */
  sleep?: Sleep;
  /** Accepted so one options object serves `withRetry` and `withTimeout`; time flows through `sleep`. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link TimeoutOptions}. @internal */
export const TIMEOUT_KEYS = keysOf<TimeoutOptions>()([
  'timeoutMs',
  'deadline',
  'signal',
  'sleep',
  'clock',
]);

/** The operation bounded by a timeout; it should stop when `signal` aborts. */
export type TimeoutOperation<T> = (signal: AbortSignal) => PromiseLike<T> | T;

/** One `withTimeout` call: settles once, then tears down whatever it set up. */
class TimeoutCall<T> extends WheelEntry implements OutcomeSink {
  resolve: (value: T | PromiseLike<T>) => void = noSettler;
  reject: (error: unknown) => void = noSettler;
  settled = false;
  /** This call's own signal for `op` (only when `op` takes one), aborted with the decisive error. */
  controller: AbortController | undefined = undefined;
  /** Cancels the injected sleep once the call settles, so no virtual timer is left pending. */
  sleepController: AbortController | undefined = undefined;
  /** Stops waiting on the caller's signal. */
  stopListening: (() => void) | undefined = undefined;

  constructor(
    readonly timeoutMs: number,
    readonly callerSignal: AbortSignal | undefined,
  ) {
    super();
  }

  /** `op` settled. */
  onOutcome(ok: boolean, value: unknown): void {
    if (ok) this.win(value as T);
    else this.lose(value);
  }

  win(value: T): void {
    if (this.settled) return;
    this.finish();
    this.resolve(value);
  }

  lose(error: unknown): void {
    if (this.settled) return;
    this.finish();
    this.reject(error);
  }

  /** The deadline passed first. */
  expire(): Error {
    return this.fail(new DeadlineExceededError(this.timeoutMs));
  }

  /** The caller's signal aborted first. */
  callerAborted(): void {
    if (!this.settled) this.fail(abortError(this.callerSignal as AbortSignal));
  }

  /** Settles with `error` and aborts `op`'s own signal with it as the reason. */
  fail(error: Error): Error {
    this.finish();
    this.reject(error);
    this.controller?.abort(error);
    return error;
  }

  private finish(): void {
    this.settled = true;
    sharedTimerWheel.cancel(this);
    this.stopListening?.();
    this.sleepController?.abort();
  }
}

function resolveTimeout(options: TimeoutOptions): number {
  const { timeoutMs, deadline } = options;
  let ms = Number.POSITIVE_INFINITY;
  if (timeoutMs !== undefined) {
    ms = checkNumber('timeoutMs', timeoutMs, { min: 0, allowInfinity: true });
  } else if (deadline === undefined) {
    throw new TypeError('withTimeout needs timeoutMs or deadline');
  }
  if (deadline !== undefined) {
    checkFunction(
      'deadline.remainingMs',
      (deadline as Partial<Deadline> | null)?.remainingMs,
      false,
    );
    const left = deadline.remainingMs();
    if (left < ms) ms = left;
  }
  return ms;
}

/**
 * Runs `op` with a time limit. When the deadline passes first the call
 * rejects at once with `DeadlineExceededError`; when the caller's `signal`
 * aborts first it rejects with `abortError(signal)` (the signal's reason when
 * that is an `Error`, else `OperationAbortedError`). It does not wait for `op`:
 * `op`'s signal aborts with that error as its reason and `op`'s later
 * rejection is absorbed. A `sleep` that throws or rejects rejects the call
 * with `DeadlineTimerError` (cause: the sleep's error).
 *
 * Cost: with the default timer the deadline joins one shared host timer,
 * which holds the process open while any deadline is pending and rounds a
 * deadline up to the millisecond — or, from 256 ms on, to at most 1/128 of
 * the timeout (a 10 s timeout fires up to 64 ms late, never early). An `op`
 * that declares no parameter gets `neverAbortedSignal`, so no signal is built
 * for it — declare `(signal) =>` (not rest parameters) to receive one. That
 * signal is this call's own: it aborts only for this call's deadline or its
 * caller's `signal`, never because another call timed out.
 * @example
 * const res = await withTimeout((signal) => fetch(url, { signal }), { timeoutMs: 5000 });
 */
export function withTimeout<T>(op: TimeoutOperation<T>, options: TimeoutOptions): Promise<T> {
  checkFunction('withTimeout(op)', op, false);
  checkOptions('withTimeout', options, TIMEOUT_KEYS, '', false);
  const timeoutMs = resolveTimeout(options);
  const callerSignal = options.signal;
  checkSignal('signal', callerSignal);
  const sleep = options.sleep === systemSleep ? undefined : options.sleep;
  checkFunction('sleep', sleep);
  if (callerSignal?.aborted) return Promise.reject(abortError(callerSignal));
  // An expired deadline never starts op: there is no time to do anything useful.
  if (timeoutMs <= 0) return Promise.reject(new DeadlineExceededError(timeoutMs));

  const call = new TimeoutCall<T>(timeoutMs, callerSignal);
  const promise = newPromiseInto<T>(call);
  const finite = timeoutMs !== Number.POSITIVE_INFINITY;
  const wantsSignal = op.length > 0;
  let signal = neverAbortedSignal;
  if (wantsSignal) {
    call.controller = new AbortController();
    signal = call.controller.signal;
  }
  if (sleep !== undefined) {
    if (finite) startSleep(call, sleep);
    if (call.settled) return promise;
  } else if (finite) {
    sharedTimerWheel.schedule(call, timeoutMs);
  }
  if (callerSignal !== undefined)
    call.stopListening = onAbort(callerSignal, () => call.callerAborted());

  let result: PromiseLike<T> | T;
  try {
    result = op(signal);
  } catch (error) {
    call.lose(error);
    return promise;
  }
  if (isThenable(result)) forwardOutcome(call, result);
  else call.win(result);
  return promise;
}

/** Waits out the deadline on an injected sleep; a sleep that fails means the deadline is unenforced. */
function startSleep<T>(call: TimeoutCall<T>, sleep: Sleep): void {
  const sleepController = new AbortController();
  call.sleepController = sleepController;
  const timerFailed = (error: unknown) => {
    if (!call.settled) call.fail(new DeadlineTimerError(error));
  };
  let waiting: Promise<void>;
  try {
    waiting = sleep(call.timeoutMs, sleepController.signal);
  } catch (error) {
    timerFailed(error);
    return;
  }
  Promise.resolve(waiting).then(() => {
    // A sleep we cancelled resolves early; only an uncancelled one means the deadline passed.
    if (!call.settled && !sleepController.signal.aborted) call.expire();
  }, timerFailed);
}
