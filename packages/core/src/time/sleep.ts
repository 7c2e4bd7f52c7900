import { onAbort } from '../internal/on-abort.js';
import { startTimer, stopTimer } from './timer.js';

/**
 * Waits `ms` milliseconds, or less when `signal` aborts. Never rejects: callers
 * check `signal.aborted` afterwards to tell the two apart.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const resolved = Promise.resolve();

/**
 * A {@link Sleep} on the host timer that clears its timer and listener on
 * abort; `unref` lets the process exit while it waits.
 * @internal
 */
function hostSleep(unref: boolean): Sleep {
  return (ms, signal) => {
    if (signal?.aborted) return resolved;
    if (signal === undefined) {
      return new Promise((resolve) => {
        startTimer(Math.max(0, ms), resolve, unref);
      });
    }
    return new Promise((resolve) => {
      const handle = startTimer(
        Math.max(0, ms),
        () => {
          stopWaiting();
          resolve();
        },
        unref,
      );
      const stopWaiting = onAbort(signal, () => {
        stopTimer(handle);
        resolve();
      });
    });
  };
}

/** Sleeps on the host timer; clears the timer and listener on abort. */
export const systemSleep: Sleep = hostSleep(false);

/**
 * {@link systemSleep} on an `unref`'d timer: background work (health probing)
 * must never keep the process alive.
 * @internal
 */
export const backgroundSleep: Sleep = hostSleep(true);
