import { startTimer, stopTimer } from './timer.js';

/**
 * Waits `ms` milliseconds, or less when `signal` aborts. Never rejects: callers
 * check `signal.aborted` afterwards to tell the two apart.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const resolved = Promise.resolve();

/** Sleeps on the host timer; clears the timer and listener on abort. */
export const systemSleep: Sleep = (ms, signal) => {
  if (signal?.aborted) return resolved;
  if (signal === undefined) {
    return new Promise((resolve) => {
      startTimer(Math.max(0, ms), resolve);
    });
  }
  return new Promise((resolve) => {
    const onAbort = () => {
      stopTimer(handle);
      resolve();
    };
    const handle = startTimer(Math.max(0, ms), () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
};
