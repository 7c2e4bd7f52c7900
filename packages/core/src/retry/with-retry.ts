import { type TimeoutOptions, withTimeout } from '../deadline/with-timeout.js';
import { ErrorPolicyError } from '../errors/error-policy-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { checkSignal } from '../internal/call-options.js';
import { isThenable } from '../internal/thenable.js';
import {
  checkFunction,
  checkNumber,
  checkObject,
  checkOptions,
  describeValue,
  type KnownKeys,
  optionRangeError,
} from '../internal/validate.js';
import type { Clock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { type Backoff, createBackoff } from './backoff.js';
import type { RetryBudget } from './budget.js';
import { isTransientError } from './transient.js';
import type { ErrorVerdict } from './verdict.js';

/** What `onRetry` hears before each backoff sleep. */
export interface RetryAttemptInfo {
  /** The attempt that just failed (1 = the first call). */
  attempt: number;
  /** How long the chain will sleep before the next attempt, in ms. */
  delayMs: number;
  /** The error the attempt failed with. */
  error: unknown;
}

/**
 * Decides whether a failure is retried: a boolean, or an {@link ErrorVerdict}
 * (`retry` defaults to true; `retryAfterMs` raises the next delay). It must be
 * synchronous: any other verdict (a Promise, `undefined`) rejects the call
 * with `TypeError`, and a throw rejects it with `ErrorPolicyError`; both carry
 * the operation's error as `cause`.
 */
export type ShouldRetry = (error: unknown, attempt: number) => boolean | ErrorVerdict;

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** The delay schedule. Defaults to exponential from 100 ms, capped at 10 s, additive jitter. */
  backoff?: Backoff;
  /** Calls in total, the first included (integer >= 1, <= `backoff.budgetedAttempts`). Defaults to `backoff.budgetedAttempts`, else 3. */
  attempts?: number;
  /** Which failures to retry. Defaults to {@link isTransientError}. */
  shouldRetry?: ShouldRetry;
  /** Observer called before each backoff sleep; its errors are ignored. Defaults to none. */
  onRetry?: (info: RetryAttemptInfo) => void;
  /** Caller cancellation: checked before each attempt, before `shouldRetry`, and during each sleep. Defaults to none. */
  signal?: AbortSignal;
  /** Bounds the whole chain, attempts and sleeps, with `DeadlineExceededError` (ms, > 0). Defaults to none. */
  timeoutMs?: number;
  /** A retry budget; a retry it refuses ends the chain with the last error. Defaults to none. */
  budget?: RetryBudget;
  /** Waits between attempts; if it throws or rejects (not on abort), the call rejects with the last operation error, unchanged. Defaults to `systemSleep`. */
  sleep?: Sleep;
  /** Accepted so one options object serves `withRetry` and `withTimeout`; time flows through `sleep`. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link RetryOptions}. @internal */
export const RETRY_KEYS = {
  backoff: true,
  attempts: true,
  shouldRetry: true,
  onRetry: true,
  signal: true,
  timeoutMs: true,
  budget: true,
  sleep: true,
  clock: true,
} as const satisfies KnownKeys<RetryOptions>;

/** The operation retried; it should stop when `signal` aborts. */
export type RetryOperation<T> = (signal: AbortSignal) => PromiseLike<T> | T;

const defaultBackoff = createBackoff({
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 10_000,
});

const NO_OPTIONS: RetryOptions = Object.freeze({});

/** A chain's settings after validation; built only once an attempt has failed. */
interface Chain<T> {
  op: RetryOperation<T>;
  attempts: number;
  backoff: Backoff;
  shouldRetry: ShouldRetry;
  onRetry: ((info: RetryAttemptInfo) => void) | undefined;
  budget: RetryBudget | undefined;
  sleep: Sleep;
}

function validate(options: RetryOptions): number {
  checkOptions('withRetry', options, RETRY_KEYS, '', false);
  const { backoff } = options;
  if (backoff !== undefined) {
    checkObject('backoff', backoff, false);
    checkFunction('backoff.delayFor', backoff.delayFor, false);
  }
  const budgeted = backoff?.budgetedAttempts;
  let attempts = budgeted ?? 3;
  if (options.attempts !== undefined) {
    attempts = checkNumber('attempts', options.attempts, { min: 1, integer: true });
    if (budgeted !== undefined && attempts > budgeted) {
      throw optionRangeError(
        'attempts',
        `${attempts} exceeds the backoff's budgetedAttempts ${budgeted} (its maxTotalDelayMs was checked for that many)`,
      );
    }
  }
  checkFunction('shouldRetry', options.shouldRetry);
  checkFunction('onRetry', options.onRetry);
  checkFunction('sleep', options.sleep);
  if (options.budget !== undefined) {
    checkObject('budget', options.budget, false);
    checkFunction('budget.tryRetry', options.budget.tryRetry, false);
    checkFunction('budget.recordRequest', options.budget.recordRequest, false);
  }
  if (options.timeoutMs !== undefined) checkNumber('timeoutMs', options.timeoutMs, { above: 0 });
  checkSignal('signal', options.signal);
  return attempts;
}

/**
 * Runs `op`, retrying failures that `shouldRetry` accepts on the `backoff`
 * schedule. The last error is rethrown unchanged; cancellation is never
 * retried and rejects with the signal's reason when that is an `Error`, else
 * `OperationAbortedError`. A `retryAfterMs` on the error or the verdict
 * (server pushback) raises the next delay to at least that value. Invalid
 * options (a `signal` that is not an AbortSignal included) throw `TypeError`
 * synchronously, before `op` runs. A throwing `shouldRetry` rejects with
 * `ErrorPolicyError`, as in `protect` (cause: the operation's error).
 * @example
 * const user = await withRetry((signal) => api.getUser(id, { signal }), { backoff, timeoutMs: 20_000 });
 */
export function withRetry<T>(
  op: RetryOperation<T>,
  options: RetryOptions = NO_OPTIONS,
): Promise<T> {
  checkFunction('withRetry(op)', op, false);
  const attempts = options === NO_OPTIONS ? 3 : validate(options);
  if (options.timeoutMs === undefined) {
    return runChain(op, options.signal ?? neverAbortedSignal, attempts, options);
  }
  const timeout: TimeoutOptions = { timeoutMs: options.timeoutMs };
  if (options.signal !== undefined) timeout.signal = options.signal;
  if (options.sleep !== undefined) timeout.sleep = options.sleep;
  return withTimeout((signal) => runChain(op, signal, attempts, options), timeout);
}

function runChain<T>(
  op: RetryOperation<T>,
  signal: AbortSignal,
  attempts: number,
  options: RetryOptions,
): Promise<T> {
  options.budget?.recordRequest();
  if (signal !== neverAbortedSignal && signal.aborted) return Promise.reject(abortError(signal));
  // The success path: no async frame, and a closure only for an op that returns a promise
  // (the chain's settings are built only after a failure).
  let first: PromiseLike<T> | T;
  try {
    first = op(signal);
  } catch (error) {
    return retryAfterFailure(chainOf(op, attempts, options), signal, error);
  }
  if (!isThenable(first)) return Promise.resolve(first);
  return Promise.resolve(first).then(undefined, (error: unknown) =>
    retryAfterFailure(chainOf(op, attempts, options), signal, error),
  );
}

function chainOf<T>(op: RetryOperation<T>, attempts: number, options: RetryOptions): Chain<T> {
  return {
    op,
    attempts,
    backoff: options.backoff ?? defaultBackoff,
    shouldRetry: options.shouldRetry ?? isTransientError,
    onRetry: options.onRetry,
    budget: options.budget,
    sleep: options.sleep ?? systemSleep,
  };
}

async function retryAfterFailure<T>(
  chain: Chain<T>,
  signal: AbortSignal,
  firstError: unknown,
): Promise<T> {
  let error = firstError;
  let previousDelay: number | undefined;
  for (let attempt = 1; ; attempt++) {
    // Cancellation wins over the failure it caused and is never offered to shouldRetry.
    if (signal.aborted) throw abortError(signal);
    if (attempt >= chain.attempts) throw error;
    const verdict = judge(chain.shouldRetry, error, attempt);
    if (verdict === false || (verdict !== true && verdict.retry === false)) throw error;
    if (chain.budget !== undefined && !chain.budget.tryRetry()) throw error;
    let delayMs = chain.backoff.delayFor(attempt, previousDelay);
    previousDelay = delayMs;
    delayMs = Math.max(
      delayMs,
      retryAfter(error),
      typeof verdict === 'object' ? retryAfter(verdict) : 0,
    );
    if (chain.onRetry !== undefined) {
      try {
        chain.onRetry({ attempt, delayMs, error });
      } catch {
        // An observer must never break the chain it observes.
      }
    }
    try {
      await chain.sleep(delayMs, signal);
    } catch {
      // A sleep that failed did not wait out the backoff: end with the operation's error, as a refused retry does.
      if (signal.aborted) throw abortError(signal);
      throw error;
    }
    if (signal.aborted) throw abortError(signal);
    try {
      return await chain.op(signal);
    } catch (next) {
      error = next;
    }
  }
}

/**
 * Runs the classifier: a throw becomes `ErrorPolicyError` (cause: the
 * operation's error), a verdict that is neither a boolean nor an
 * `ErrorVerdict` object (a Promise from an `async` classifier, `undefined`)
 * a `TypeError` (cause: the operation's error) — never a silent retry.
 */
function judge(shouldRetry: ShouldRetry, error: unknown, attempt: number): boolean | ErrorVerdict {
  let verdict: unknown;
  try {
    verdict = shouldRetry(error, attempt);
  } catch (policyError) {
    throw new ErrorPolicyError(error, policyError);
  }
  if (typeof verdict === 'boolean') return verdict;
  if (typeof verdict === 'object' && verdict !== null && !isThenable(verdict)) {
    return verdict as ErrorVerdict;
  }
  const got = isThenable(verdict)
    ? 'a Promise (shouldRetry must be synchronous)'
    : describeValue(verdict);
  throw new TypeError(`shouldRetry must return a boolean or an ErrorVerdict object, got ${got}`, {
    cause: error,
  });
}

/** A finite, non-negative `retryAfterMs` on an error or verdict, else 0. */
function retryAfter(source: unknown): number {
  const value =
    typeof source === 'object' && source !== null
      ? (source as { retryAfterMs?: unknown }).retryAfterMs
      : undefined;
  return typeof value === 'number' && value > 0 && Number.isFinite(value) ? value : 0;
}
