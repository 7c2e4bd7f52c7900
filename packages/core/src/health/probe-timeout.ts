import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { abortError } from '../internal/abort.js';
import { startTimer, stopTimer } from '../time/timer.js';
import type { HealthVerdict } from './probe.js';

/**
 * Runs one built-in probe attempt under its own timeout. `run` gets a signal
 * that aborts on the caller's signal or when `timeoutMs` passes. A timeout
 * becomes an unhealthy verdict; the caller's abort rejects with its reason, so
 * a cut probe is never mistaken for an unhealthy target. The timer and the
 * listener are removed in every case.
 * @internal
 */
export async function withProbeTimeout(
  outer: AbortSignal,
  timeoutMs: number,
  what: string,
  run: (signal: AbortSignal) => Promise<HealthVerdict>,
): Promise<HealthVerdict> {
  if (outer.aborted) throw abortError(outer);
  const controller = new AbortController();
  const onAbort = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  const timer = startTimer(timeoutMs, () => controller.abort(new DeadlineExceededError(timeoutMs)));
  try {
    return await run(controller.signal);
  } catch (error) {
    if (outer.aborted) throw abortError(outer);
    if (controller.signal.aborted) {
      return { healthy: false, reason: `${what} timed out after ${timeoutMs} ms` };
    }
    throw error;
  } finally {
    stopTimer(timer);
    outer.removeEventListener('abort', onAbort);
  }
}
