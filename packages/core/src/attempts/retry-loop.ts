import { isDeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import { abortError } from '../internal/abort.js';
import type { ErrorVerdict } from '../retry/verdict.js';
import type { AttemptEngine } from './engine.js';
import { errorTypeOf, stopRefusal, type TelemetryScope } from './telemetry.js';

/** How a promise-style driver runs one attempt and judges its failure. @internal */
export interface RetryLoopHooks<T> {
  /** Starts attempt `attempt` (2 for the first retry). */
  run(attempt: number): T | PromiseLike<T>;
  /** Judges a failure; may throw (the loop rejects with what it throws). */
  judge(error: unknown, attempt: number): ErrorVerdict | undefined;
  /** Told before each retry's wait: the attempt that failed, the delay, its error. Must not throw. */
  retrying?: ((attempt: number, delayMs: number, error: unknown) => void) | undefined;
  /** The call's telemetry: the loop reports each attempt, retry and stop to it. Defaults to none. */
  telemetry?: TelemetryScope | undefined;
  /** The bounded name of an attempt's error for telemetry. Defaults to the error's `name`. */
  errorType?: ((error: unknown) => string) | undefined;
}

/** Runs attempt `n` through `hooks`, telling the call's telemetry how it went. */
async function observed<T>(hooks: RetryLoopHooks<T>, scope: TelemetryScope, n: number): Promise<T> {
  const { tel } = scope;
  scope.attempts = n;
  tel.attemptStart(n, scope.clock());
  try {
    const value = await hooks.run(n);
    tel.attemptEnd(n, 'success', undefined, scope.clock());
    return value;
  } catch (error) {
    // A per-attempt deadline rejects with DeadlineExceededError (a call's ends the loop instead).
    const timedOut = isDeadlineExceededError(error);
    if (timedOut) tel.deadlineExceeded('attempt');
    tel.attemptEnd(
      n,
      timedOut ? 'timeout' : 'failure',
      (hooks.errorType ?? errorTypeOf)(error),
      scope.clock(),
    );
    throw error;
  }
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
    const scope = hooks.telemetry;
    if (delayMs < 0) {
      const refused = scope === undefined ? undefined : stopRefusal(delayMs);
      if (refused !== undefined) scope?.tel.refused(refused);
      throw error;
    }
    previousDelayMs = delayMs;
    scope?.tel.retry(n, delayMs, (hooks.errorType ?? errorTypeOf)(error));
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
      return await (scope === undefined ? hooks.run(n + 1) : observed(hooks, scope, n + 1));
    } catch (next) {
      error = next;
    }
  }
}

/**
 * Runs attempt 1 of a call and, when it fails and there is an engine, the
 * retries {@link retryAfterFailure} decides on; rejects with the last
 * attempt's error. A caller without a `signal` gets one that never aborts,
 * built only once an attempt has failed. Not an async function: an async
 * frame costs about 400 B a call, the first attempt's own promise nothing.
 * @internal
 */
export function runAttempts<T>(
  engine: AttemptEngine | undefined,
  hooks: RetryLoopHooks<T>,
  signal: AbortSignal | undefined,
  deadlineAt: number,
): Promise<T> {
  let first: Promise<T>;
  try {
    const scope = hooks.telemetry;
    first = Promise.resolve(scope === undefined ? hooks.run(1) : observed(hooks, scope, 1));
  } catch (error) {
    first = Promise.reject(error);
  }
  if (engine === undefined) return first;
  return first.then(undefined, (error: unknown) => {
    const live = signal ?? new AbortController().signal;
    return retryAfterFailure(engine, hooks, 1, error, live, deadlineAt);
  });
}
