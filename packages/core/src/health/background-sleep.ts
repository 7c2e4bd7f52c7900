import type { Sleep } from '../time/sleep.js';
import { startTimer, stopTimer } from '../time/timer.js';

const resolved = Promise.resolve();

/**
 * A {@link Sleep} on an `unref`'d host timer: background probing must never
 * keep the process alive. Clears its timer and listener on abort.
 * @internal
 */
export const backgroundSleep: Sleep = (ms, signal) => {
  if (signal?.aborted) return resolved;
  return new Promise((resolve) => {
    const onAbort = () => {
      stopTimer(handle);
      resolve();
    };
    const handle = startTimer(
      Math.max(0, ms),
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      true,
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
};
