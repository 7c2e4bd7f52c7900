/**
 * The one module that touches the host's timers. Everything else in Breakwater
 * waits through an injected {@link Sleep} or these helpers.
 * @internal
 */

/** An opaque handle returned by {@link startTimer}. @internal */
export type TimerHandle = ReturnType<typeof setTimeout>;

/**
 * Starts a one-shot timer. `unref` lets the process exit while it is pending.
 * @internal
 */
export function startTimer(ms: number, fn: () => void, unref = false): TimerHandle {
  const handle = setTimeout(fn, ms);
  if (unref) handle.unref?.();
  return handle;
}

/** Clears a timer started with {@link startTimer}. @internal */
export function stopTimer(handle: TimerHandle | undefined): void {
  if (handle !== undefined) clearTimeout(handle);
}
