/**
 * The adapter's only use of host timers: a deadline per call costs one
 * `setTimeout`, cheaper than an `AbortController` plus a sleep.
 * @internal
 */

type HostHandle = ReturnType<typeof setTimeout>;

/** Host timers fire a longer delay after 1 ms; longer waits hop in steps of this. */
const MAX_HOST_MS = 2_147_483_647;

/** A wait past {@link MAX_HOST_MS}: re-armed until the whole delay has passed. @internal */
export class SteppedTimer {
  /** The pending host timer. */
  current: HostHandle;

  constructor(
    private left: number,
    private readonly done: () => void,
  ) {
    this.current = this.hop();
  }

  private hop(): HostHandle {
    const ms = Math.min(this.left, MAX_HOST_MS);
    this.left -= ms;
    return setTimeout(() => {
      if (this.left > 0) this.current = this.hop();
      else this.done();
    }, ms);
  }
}

/** An opaque timer handle. @internal */
export type TimerHandle = HostHandle | SteppedTimer;

/** Starts a one-shot timer that waits all of `ms`, even past the host's limit. @internal */
export function startTimer(ms: number, fn: () => void): TimerHandle {
  return ms > MAX_HOST_MS ? new SteppedTimer(ms, fn) : setTimeout(fn, ms);
}

/** Clears a timer from {@link startTimer} or {@link startTimerWith}. @internal */
export function stopTimer(handle: TimerHandle | undefined): void {
  if (handle !== undefined) clearTimeout(handle instanceof SteppedTimer ? handle.current : handle);
}

/** Starts a one-shot timer calling `fn(arg)`: one module-level `fn` serves every call, so no closure per call. @internal */
export function startTimerWith<T>(ms: number, fn: (arg: T) => void, arg: T): TimerHandle {
  return ms > MAX_HOST_MS ? new SteppedTimer(ms, () => fn(arg)) : setTimeout(fn, ms, arg);
}
