/**
 * The adapter's only use of host timers: a deadline per call costs one
 * `setTimeout`, cheaper than an `AbortController` plus a sleep.
 * @internal
 */
export type TimerHandle = ReturnType<typeof setTimeout>;

/** Starts a one-shot timer. @internal */
export function startTimer(ms: number, fn: () => void): TimerHandle {
  return setTimeout(fn, ms);
}

/** Clears a timer from {@link startTimer}. @internal */
export function stopTimer(handle: TimerHandle | undefined): void {
  if (handle !== undefined) clearTimeout(handle);
}

/** Starts a one-shot timer calling `fn(arg)`: one module-level `fn` serves every call, so no closure per call. @internal */
export function startTimerWith<T>(ms: number, fn: (arg: T) => void, arg: T): TimerHandle {
  return setTimeout(fn, ms, arg);
}
