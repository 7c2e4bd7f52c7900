import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { DeadlineTimerError } from '../errors/deadline-timer-error.js';
import type { Sleep } from '../time/sleep.js';
import { LinkedController } from './linked-controller.js';
import type { RouteContext, RouteOperation } from './types.js';

const TIMED_OUT = Symbol('timed out');

/**
 * Runs one attempt under a per-attempt timeout. The operation's signal aborts
 * with a `DeadlineExceededError` when `timeoutMs` passes (or with the parent's
 * reason). `'immediate'` rejects at the deadline without waiting; `wait`
 * waits for the operation to settle, then rejects with the deadline error.
 * A late rejection of an abandoned operation is absorbed. The timer and the
 * listeners are released in every case.
 * @internal
 */
export async function attemptWithTimeout<R, T>(
  fn: RouteOperation<R, T>,
  resource: R,
  parent: AbortSignal,
  providerId: string,
  attempt: number,
  timeoutMs: number,
  wait: boolean,
  sleep: Sleep,
): Promise<T> {
  const op = new LinkedController(parent);
  const timer = new AbortController();
  const deadline = sleep(timeoutMs, timer.signal).then(
    () => {
      if (timer.signal.aborted) return undefined;
      op.abort(new DeadlineExceededError(timeoutMs));
      return TIMED_OUT;
    },
    (error: unknown) => {
      throw new DeadlineTimerError(error);
    },
  );
  try {
    const context: RouteContext = { signal: op.signal, providerId, attempt };
    const running = Promise.resolve().then(() => fn(resource, context));
    if (wait) {
      const settled = await Promise.allSettled([running]);
      if (op.signal.aborted) throw op.signal.reason;
      const outcome = settled[0] as PromiseSettledResult<T>;
      if (outcome.status === 'rejected') throw outcome.reason;
      return outcome.value;
    }
    running.catch(() => {});
    const winner = await Promise.race([running, deadline]);
    if (winner === TIMED_OUT) throw op.signal.reason;
    return winner as T;
  } finally {
    timer.abort();
    op.unlink();
    deadline.catch(() => {});
  }
}
