/**
 * The one module that touches the host's timers. Everything else in Breakwater
 * waits through an injected {@link Sleep} or these helpers.
 * @internal
 */

type HostHandle = ReturnType<typeof setTimeout>;

/**
 * The longest delay a host timer honours: Node and browsers store it in a
 * signed 32-bit integer and fire a longer one after 1 ms.
 * @internal
 */
export const MAX_HOST_TIMER_MS = 2_147_483_647;

/**
 * A wait longer than {@link MAX_HOST_TIMER_MS}, as a chain of host timers of
 * at most that length each; `fn` runs when the last link fires.
 * @internal
 */
export class ChainedTimer {
  /** The host timer of the current link. */
  link: HostHandle;
  /** Whether the chain keeps the process alive (applies to every later link too). */
  keepsAlive: boolean;
  private remaining: number;
  private readonly step = (): void => {
    if (this.remaining > 0) this.link = this.arm();
    else this.fn();
  };

  constructor(
    ms: number,
    private readonly fn: () => void,
    unref: boolean,
  ) {
    this.remaining = ms;
    this.keepsAlive = !unref;
    this.link = this.arm();
  }

  private arm(): HostHandle {
    // A host timer never fires early, so the links add up to at least the whole wait.
    const ms = Math.min(this.remaining, MAX_HOST_TIMER_MS);
    this.remaining -= ms;
    const link = setTimeout(this.step, ms);
    if (!this.keepsAlive) link.unref?.();
    return link;
  }
}

/** An opaque handle returned by {@link startTimer}. @internal */
export type TimerHandle = HostHandle | ChainedTimer;

/**
 * Starts a one-shot timer that waits the whole `ms`, chaining host timers past
 * {@link MAX_HOST_TIMER_MS}. `unref` lets the process exit while it is pending.
 * @internal
 */
export function startTimer(ms: number, fn: () => void, unref = false): TimerHandle {
  if (ms > MAX_HOST_TIMER_MS) return new ChainedTimer(ms, fn, unref);
  const handle = setTimeout(fn, ms);
  if (unref) handle.unref?.();
  return handle;
}

/**
 * {@link startTimer} calling `fn(arg)`: one module-level `fn` serves every
 * call, so a per-call deadline costs no closure on the host timer's path.
 * @internal
 */
export function startTimerWith<T>(ms: number, fn: (arg: T) => void, arg: T): TimerHandle {
  if (ms > MAX_HOST_TIMER_MS) return new ChainedTimer(ms, () => fn(arg), false);
  return setTimeout(fn, ms, arg);
}

/** Clears a timer started with {@link startTimer}, whichever link it is on. @internal */
export function stopTimer(handle: TimerHandle | undefined): void {
  if (handle === undefined) return;
  clearTimeout(handle instanceof ChainedTimer ? handle.link : handle);
}

/**
 * Runs `fn` in the check phase of this turn of the event loop, before the
 * process could exit (`setImmediate`; a loop of awaited calls that never
 * yields runs it once, after the loop). At once where the host has none
 * (browsers, where timers never hold anything open anyway).
 * @internal
 */
export const afterTurn: (fn: () => void) => void =
  typeof setImmediate === 'function'
    ? (fn) => {
        setImmediate(fn);
      }
    : (fn) => {
        fn();
      };

/**
 * Makes a timer from {@link startTimer} hold the process open (`keepAlive`)
 * or not; a no-op where the host has no such notion (browsers).
 * @internal
 */
export function keepAlive(handle: TimerHandle, keep: boolean): void {
  let link: HostHandle;
  if (handle instanceof ChainedTimer) {
    handle.keepsAlive = keep;
    link = handle.link;
  } else {
    link = handle;
  }
  if (keep) link.ref?.();
  else link.unref?.();
}
