import { abortError } from '../internal/abort.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import type { AttemptEngine } from './engine.js';

/** How a promise-style driver runs one attempt and judges its failure. @internal */
export interface RetryLoopHooks<T> {
  /** Starts attempt `attempt` (2 for the first retry). */
  run(attempt: number): T | PromiseLike<T>;
  /** Judges a failure; may throw (the loop rejects with what it throws). */
  judge(error: unknown, attempt: number): ErrorVerdict | undefined;
  /** Told before each retry's wait: the attempt that failed, the delay, its error. Must not throw. */
  retrying?: ((attempt: number, delayMs: number, error: unknown) => void) | undefined;
  /** Told when the engine stops the retries (its negative `STOP_*` code). Must not throw. */
  stopped?: ((code: number) => void) | undefined;
}

/**
 * The promise-style driver of an {@link AttemptEngine}: attempt `attempt`
 * already failed with `error`; judges it, and retries on the engine's
 * schedule until an attempt succeeds or the engine stops, then rejects with
 * the last attempt's error unchanged. Cancellation wins over the failure it
 * caused and is never judged; the wait between attempts ends early on abort.
 * The success path of its callers never enters it: it is built only once an
 * attempt has failed.
 * @internal
 */
export async function retryAfterFailure<T>(
  engine: AttemptEngine,
  hooks: RetryLoopHooks<T>,
  attempt: number,
  firstError: unknown,
  signal: AbortSignal,
  deadlineAt: number,
): Promise<T> {
  let error = firstError;
  let previousDelayMs = 0;
  for (let n = attempt; ; n++) {
    if (signal.aborted) throw abortError(signal);
    const verdict = hooks.judge(error, n);
    const delayMs = engine.afterFailure(n, previousDelayMs, verdict, error, deadlineAt);
    if (delayMs < 0) {
      hooks.stopped?.(delayMs);
      throw error;
    }
    previousDelayMs = delayMs;
    hooks.retrying?.(n, delayMs, error);
    if (delayMs > 0) {
      try {
        await engine.sleep(delayMs, signal);
      } catch {
        // A sleep that fails only shortens the wait: the retry still runs and the deadline still bounds it.
      }
    }
    if (signal.aborted) throw abortError(signal);
    try {
      return await hooks.run(n + 1);
    } catch (next) {
      error = next;
    }
  }
}
