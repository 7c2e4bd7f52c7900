import {
  AttemptEngine,
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF,
  MAX_ATTEMPTS,
} from '../attempts/engine.js';
import { retryAfterFailure } from '../attempts/retry-loop.js';
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
  keysOf,
  optionPath,
  optionRangeError,
} from '../internal/validate.js';
import { type Clock, systemClock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { type Backoff, type BackoffOptions, createBackoff } from './backoff.js';
import type { RetryBudget } from './budget.js';
import { isTransientError } from './transient.js';
import type { ErrorVerdict } from './verdict.js';

/** What `onRetry` hears before each retry's wait. */
export interface RetryAttemptInfo {
  /** The attempt that just failed (1 = the first call). */
  attempt: number;
  /** How long the chain waits before the next attempt, in ms. */
  delayMs: number;
  /** The error the attempt failed with. */
  error: unknown;
}

/**
 * Decides whether a failure is retried: a boolean, or an {@link ErrorVerdict}
 * (`retry` defaults to true; a `retryAfterMs` replaces the next delay). It
 * must be synchronous: any other verdict (a Promise, `undefined`) rejects the
 * call with `TypeError`, and a throw rejects it with `ErrorPolicyError`; both
 * carry the operation's error as `cause`.
 */
export type RetryClassifier = (error: unknown, attempt: number) => boolean | ErrorVerdict;

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** The delay schedule: a `Backoff` or `createBackoff` options. Defaults to `DEFAULT_BACKOFF` (exponential from 100 ms, ×2, capped at 5 s, full jitter). */
  backoff?: Backoff | BackoffOptions;
  /** Calls in total, the first included (an integer in `[1, 10]`, <= `backoff.budgetedAttempts`). Defaults to `backoff.budgetedAttempts`, else 3. */
  attempts?: number;
  /** Which failures to retry. Defaults to {@link isTransientError}. */
  classify?: RetryClassifier;
  /** Observer called before each retry's wait, with the attempt that failed; its errors are ignored. Defaults to none. */
  onRetry?: (info: RetryAttemptInfo) => void;
  /** Caller cancellation: checked before each attempt, before `classify`, and during each wait. Defaults to none. */
  signal?: AbortSignal;
  /**
   * Bounds the whole chain, attempts and waits, with `DeadlineExceededError`
   * (ms, > 0); a retry that could not start before it is skipped and the last
   * error returned at once. Defaults to none.
   */
  timeoutMs?: number;
  /** A retry budget; a retry it refuses ends the chain with the last error. Defaults to none. */
  budget?: RetryBudget;
  /** Waits between attempts; if it throws or rejects (not on abort), the retry runs at once (the deadline still bounds the chain). Defaults to `systemSleep`. */
  sleep?: Sleep;
  /** Time source of the deadline check. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link RetryOptions}. @internal */
export const RETRY_KEYS = keysOf<RetryOptions>()([
  'backoff',
  'attempts',
  'classify',
  'onRetry',
  'signal',
  'timeoutMs',
  'budget',
  'sleep',
  'clock',
]);

/** The operation retried; it should stop when `signal` aborts. */
export type RetryOperation<T> = (signal: AbortSignal) => PromiseLike<T> | T;

const NO_OPTIONS: RetryOptions = Object.freeze({});

/** `false` from a classifier, as a verdict. */
const NO_RETRY: ErrorVerdict = Object.freeze({ retry: false });

/** What {@link validate} resolves once per call; the engine itself is built only after a failure. */
interface Settings {
  attempts: number;
  backoff: Backoff;
}

function validate(options: RetryOptions): Settings {
  checkOptions('withRetry', options, RETRY_KEYS, '', false);
  let backoff = DEFAULT_BACKOFF;
  if (options.backoff !== undefined) {
    const b = options.backoff;
    checkObject('backoff', b, false);
    backoff =
      typeof (b as Backoff).delayFor === 'function'
        ? (b as Backoff)
        : optionPath('backoff', () => createBackoff(b as BackoffOptions), 'withRetry');
  }
  const budgeted = backoff.budgetedAttempts;
  let attempts = budgeted ?? DEFAULT_ATTEMPTS;
  if (options.attempts !== undefined) {
    attempts = checkNumber('attempts', options.attempts, {
      min: 1,
      max: MAX_ATTEMPTS,
      integer: true,
    });
    if (budgeted !== undefined && attempts > budgeted) {
      throw optionRangeError(
        'attempts',
        `${attempts} exceeds the backoff's budgetedAttempts ${budgeted} (its maxTotalDelayMs was checked for that many)`,
      );
    }
  } else if (attempts > MAX_ATTEMPTS) {
    attempts = MAX_ATTEMPTS;
  }
  checkFunction('classify', options.classify);
  checkFunction('onRetry', options.onRetry);
  checkFunction('sleep', options.sleep);
  checkFunction('clock', options.clock);
  if (options.budget !== undefined) {
    checkObject('budget', options.budget, false);
    checkFunction('budget.tryRetry', options.budget.tryRetry, false);
    checkFunction('budget.recordRequest', options.budget.recordRequest, false);
  }
  if (options.timeoutMs !== undefined) checkNumber('timeoutMs', options.timeoutMs, { above: 0 });
  checkSignal('signal', options.signal);
  return { attempts, backoff };
}

const DEFAULT_SETTINGS: Settings = { attempts: DEFAULT_ATTEMPTS, backoff: DEFAULT_BACKOFF };

/**
 * Runs `op`, retrying failures that `classify` accepts, on the one attempt
 * engine: the `backoff` schedule, or the server's pushback (`retryAfterMs` on
 * the verdict or the error) instead of it; a retry that could not start
 * before `timeoutMs` is skipped. The last error is rethrown unchanged;
 * cancellation is never retried and rejects with the signal's reason when
 * that is an `Error`, else `OperationAbortedError`. Invalid options (a
 * `signal` that is not an AbortSignal included) throw `TypeError`
 * synchronously, before `op` runs. A throwing `classify` rejects with
 * `ErrorPolicyError`, as in `protect` (cause: the operation's error).
 * @example
 * const user = await withRetry((signal) => api.getUser(id, { signal }), { attempts: 4, timeoutMs: 20_000 });
 */
export function withRetry<T>(
  op: RetryOperation<T>,
  options: RetryOptions = NO_OPTIONS,
): Promise<T> {
  checkFunction('withRetry(op)', op, false);
  const settings = options === NO_OPTIONS ? DEFAULT_SETTINGS : validate(options);
  if (options.timeoutMs === undefined) {
    return runChain(op, options.signal ?? neverAbortedSignal, settings, options, Infinity);
  }
  const timeout: TimeoutOptions = { timeoutMs: options.timeoutMs };
  if (options.signal !== undefined) timeout.signal = options.signal;
  if (options.sleep !== undefined) timeout.sleep = options.sleep;
  const deadlineAt = (options.clock ?? systemClock)() + options.timeoutMs;
  return withTimeout((signal) => runChain(op, signal, settings, options, deadlineAt), timeout);
}

function runChain<T>(
  op: RetryOperation<T>,
  signal: AbortSignal,
  settings: Settings,
  options: RetryOptions,
  deadlineAt: number,
): Promise<T> {
  options.budget?.recordRequest();
  if (signal !== neverAbortedSignal && signal.aborted) return Promise.reject(abortError(signal));
  // The success path: no async frame, and a closure only for an op that returns a promise
  // (the engine and the chain's hooks are built only after a failure).
  let first: PromiseLike<T> | T;
  try {
    first = op(signal);
  } catch (error) {
    return retryChain(op, settings, options, signal, error, deadlineAt);
  }
  if (!isThenable(first)) return Promise.resolve(first);
  return Promise.resolve(first).then(undefined, (error: unknown) =>
    retryChain(op, settings, options, signal, error, deadlineAt),
  );
}

function retryChain<T>(
  op: RetryOperation<T>,
  settings: Settings,
  options: RetryOptions,
  signal: AbortSignal,
  error: unknown,
  deadlineAt: number,
): Promise<T> {
  if (settings.attempts === 1) {
    return Promise.reject(signal.aborted ? abortError(signal) : error);
  }
  const engine = new AttemptEngine({
    attempts: settings.attempts,
    backoff: settings.backoff,
    budget: options.budget,
    clock: options.clock,
    sleep: options.sleep ?? systemSleep,
  });
  const classify = options.classify ?? isTransientError;
  const onRetry = options.onRetry;
  return retryAfterFailure<T>(
    engine,
    {
      run: () => op(signal),
      judge: (e, attempt) => judge(classify, e, attempt),
      retrying:
        onRetry === undefined
          ? undefined
          : (attempt, delayMs, e) => {
              try {
                onRetry({ attempt, delayMs, error: e });
              } catch {
                // An observer must never break the chain it observes.
              }
            },
    },
    1,
    error,
    signal,
    deadlineAt,
  );
}

/**
 * Runs the classifier: a throw becomes `ErrorPolicyError` (cause: the
 * operation's error), a verdict that is neither a boolean nor an
 * `ErrorVerdict` object (a Promise from an `async` classifier, `undefined`)
 * a `TypeError` (cause: the operation's error) — never a silent retry.
 */
function judge(
  classify: RetryClassifier,
  error: unknown,
  attempt: number,
): ErrorVerdict | undefined {
  let verdict: unknown;
  try {
    verdict = classify(error, attempt);
  } catch (policyError) {
    throw new ErrorPolicyError(error, policyError);
  }
  if (verdict === true) return undefined;
  if (verdict === false) return NO_RETRY;
  if (typeof verdict === 'object' && verdict !== null && !isThenable(verdict)) {
    return verdict as ErrorVerdict;
  }
  const got = isThenable(verdict)
    ? 'a Promise (classify must be synchronous)'
    : describeValue(verdict);
  throw new TypeError(`classify must return a boolean or an ErrorVerdict object, got ${got}`, {
    cause: error,
  });
}
