import { type TimerWheel, WheelEntry } from '../deadline/timer-wheel.js';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { forwardOutcome, newPromiseInto, noSettler, type OutcomeSink } from '../internal/settle.js';
import { isThenable } from '../internal/thenable.js';
import { LinkedController } from './linked-controller.js';
import type { RouteContext, RouteOperation } from './types.js';

/**
 * One attempt under a per-attempt timeout: its own timer-wheel node and the
 * context handed to the operation. The context's `signal` is created lazily,
 * like `protect()`'s: an operation that never reads it costs no
 * `AbortController`. It is the attempt's own: no other attempt's deadline
 * aborts it.
 */
class TimedAttempt<T> extends WheelEntry implements RouteContext, OutcomeSink {
  resolve: (value: T | PromiseLike<T>) => void = noSettler;
  reject: (error: unknown) => void = noSettler;
  private own: AbortController | undefined = undefined;
  private linked: LinkedController | undefined = undefined;
  /** The deadline error, once the deadline passed (or the wheel's sleep failed). */
  private reason: Error | undefined = undefined;
  /** The attempt's outcome has been handed on; later settlements are absorbed. */
  private settled = false;

  constructor(
    private readonly parent: AbortSignal,
    readonly providerId: string,
    readonly attempt: number,
    private readonly timeoutMs: number,
    private readonly wait: boolean,
    private readonly wheel: TimerWheel,
  ) {
    super();
  }

  get signal(): AbortSignal {
    if (this.linked !== undefined) return this.linked.signal;
    if (this.own !== undefined) return this.own.signal;
    if (this.reason !== undefined) {
      const c = new AbortController();
      c.abort(this.reason);
      this.own = c;
      return c.signal;
    }
    // Over without a deadline: nothing will abort it any more (a link would never be removed).
    if (this.settled) return this.parent.aborted ? this.parent : neverAbortedSignal;
    this.linked = new LinkedController(this.parent);
    return this.linked.signal;
  }

  /** The deadline passed, or the wheel's sleep failed (`timerError`). */
  expire(timerError: Error | undefined): Error {
    const error = timerError ?? new DeadlineExceededError(this.timeoutMs);
    this.reason = error;
    this.linked?.abort(error);
    // 'wait': the attempt ends when the operation settles, so attempts never overlap.
    if (!this.wait) this.end(false, error);
    return error;
  }

  /** The operation settled; a timed-out attempt fails with the deadline whatever it did. */
  onOutcome(ok: boolean, value: unknown): void {
    if (this.reason !== undefined) this.end(false, this.reason);
    else this.end(ok, value);
  }

  private end(ok: boolean, value: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.wheel.cancel(this);
    this.linked?.unlink();
    if (ok) this.resolve(value as T);
    else this.reject(value);
  }
}

/**
 * Runs one attempt under a per-attempt timeout on `wheel` (the shared host
 * wheel, or the router's wheel on its injected sleep). The operation's signal
 * aborts with a `DeadlineExceededError` when `timeoutMs` passes (or with the
 * parent's reason). `'immediate'` rejects at the deadline without waiting;
 * `wait` waits for the operation to settle, then rejects with the deadline
 * error. A late rejection of an abandoned operation is absorbed. The wheel
 * entry and the parent listener are released in every case.
 * @internal
 */
export function attemptWithTimeout<R, T>(
  fn: RouteOperation<R, T>,
  resource: R,
  parent: AbortSignal,
  providerId: string,
  attempt: number,
  timeoutMs: number,
  wait: boolean,
  wheel: TimerWheel,
): Promise<T> {
  const a = new TimedAttempt<T>(parent, providerId, attempt, timeoutMs, wait, wheel);
  const promise = newPromiseInto<T>(a);
  wheel.schedule(a, timeoutMs);
  let result: T | PromiseLike<T>;
  try {
    result = fn(resource, a);
  } catch (error) {
    a.onOutcome(false, error);
    return promise;
  }
  if (isThenable(result)) forwardOutcome(a, result);
  else a.onOutcome(true, result);
  return promise;
}
