import { isDeadlineTimerError } from '../errors/deadline-timer-error.js';
import { isOperationAbortedError } from '../errors/operation-aborted-error.js';
import { checkFunction, checkOptions, describeValue, keysOf } from '../internal/validate.js';

/** Decides whether a failed attempt is worth another try. */
export type TransientErrorPredicate = (error: unknown) => boolean;

/** Options of {@link createTransientErrorPredicate}. */
export interface TransientErrorPredicateOptions {
  /** Caller-owned conflicts (e.g. a compare-and-set version clash); checked first, a match is never retried. Defaults to none. */
  isConflict?: (error: unknown) => boolean;
  /** Extra transient `code` strings (e.g. `'EAI_AGAIN'`) or status numbers (e.g. `429`); they win over the defaults. Defaults to none. */
  retryableCodes?: readonly (string | number)[];
  /** Retry errors that no rule recognises (only when every operation is idempotent). Defaults to false. */
  retryUnknown?: boolean;
}

/** Keys of {@link TransientErrorPredicateOptions}. @internal */
export const TRANSIENT_KEYS = keysOf<TransientErrorPredicateOptions>()([
  'isConflict',
  'retryableCodes',
  'retryUnknown',
]);

type Verdict = 'transient' | 'permanent' | 'unknown';

/*
 * The default rules, in order (the first that applies decides):
 *  1. not an Error (strings, plain objects, undefined)            → unknown (not retried)
 *  2. OperationAbortedError, DeadlineTimerError                     → permanent: the caller left,
 *     or the deadline could not be enforced
 *  3. a status code (`statusCode`, `status`, `response.status`)   → wins over every other hint:
 *     5xx → transient; anything else, 4xx and 409 included        → permanent
 *  4. schema validation (`name` ZodError / $ZodError)              → permanent
 *  5. timeouts: `name` AbortError / TimeoutError / DeadlineExceededError,
 *     `code` 'TIMEOUT', message containing "request timeout"       → transient
 *  6. network `code` NETWORK_ERROR / ECONNREFUSED / ECONNRESET / ETIMEDOUT,
 *     on the error or on its `cause` (Node's fetch wraps them)       → transient
 *  7. anything else                                                 → unknown (not retried)
 */
const TIMEOUT_NAMES = new Set(['AbortError', 'TimeoutError', 'DeadlineExceededError']);
const NETWORK_CODES = new Set(['NETWORK_ERROR', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']);
const SCHEMA_NAMES = new Set(['ZodError', '$ZodError']);

function isErrorLike(e: unknown): e is Error {
  return e instanceof Error || Object.prototype.toString.call(e) === '[object Error]';
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function asStatus(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599
    ? value
    : undefined;
}

/** The HTTP status carried by an error (an integer in 100–599), or `undefined`. */
function statusOf(e: unknown): number | undefined {
  return (
    asStatus(field(e, 'statusCode')) ??
    asStatus(field(e, 'status')) ??
    asStatus(field(field(e, 'response'), 'status'))
  );
}

function classify(thrown: unknown, extraCodes: ReadonlySet<string | number> | undefined): Verdict {
  if (!isErrorLike(thrown)) return 'unknown';
  if (isOperationAbortedError(thrown) || isDeadlineTimerError(thrown)) return 'permanent';
  // Typed as Error again: the brand guards narrow `thrown` to never (the classes are structural Errors).
  const e = thrown as Error;
  const code = field(e, 'code');
  const status = statusOf(e);
  if (extraCodes !== undefined) {
    if (status !== undefined && extraCodes.has(status)) return 'transient';
    if ((typeof code === 'string' || typeof code === 'number') && extraCodes.has(code)) {
      return 'transient';
    }
  }
  if (status !== undefined) return status >= 500 ? 'transient' : 'permanent';
  if (SCHEMA_NAMES.has(e.name)) return 'permanent';
  if (TIMEOUT_NAMES.has(e.name) || code === 'TIMEOUT') return 'transient';
  if (typeof e.message === 'string' && /request timeout/i.test(e.message)) return 'transient';
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return 'transient';
  const causeCode = field(e.cause, 'code');
  if (typeof causeCode === 'string' && NETWORK_CODES.has(causeCode)) return 'transient';
  return 'unknown';
}

/**
 * The default classifier: true for timeouts, 5xx and network failures; false
 * for 4xx (409 included), schema validation, cancellation, a failed deadline
 * timer, and anything unrecognised. A status code wins over every other hint.
 * @example isTransientError(Object.assign(new Error('x'), { status: 503 })) // true
 */
export function isTransientError(error: unknown): boolean {
  return classify(error, undefined) === 'transient';
}

/**
 * Builds a variant of {@link isTransientError}: `isConflict` is checked first
 * and wins (never retried), then `retryableCodes`, then the default rules;
 * `retryUnknown` retries what no rule recognises.
 * @example
 * const shouldRetry = createTransientErrorPredicate({ isConflict: isVersionClash, retryableCodes: ['EAI_AGAIN'] });
 */
export function createTransientErrorPredicate(
  options: TransientErrorPredicateOptions = {},
): TransientErrorPredicate {
  checkOptions('createTransientErrorPredicate', options, TRANSIENT_KEYS);
  const { isConflict, retryableCodes, retryUnknown = false } = options;
  checkFunction('isConflict', isConflict);
  if (retryableCodes !== undefined) {
    const ok =
      Array.isArray(retryableCodes) &&
      retryableCodes.every(
        (c) => typeof c === 'string' || (typeof c === 'number' && Number.isInteger(c)),
      );
    if (!ok) {
      throw new TypeError(
        `retryableCodes must be an array of strings or integer status codes, got ${describeValue(retryableCodes)}`,
      );
    }
  }
  if (typeof retryUnknown !== 'boolean') {
    throw new TypeError(`retryUnknown must be a boolean, got ${describeValue(retryUnknown)}`);
  }
  const extra = retryableCodes?.length ? new Set<string | number>(retryableCodes) : undefined;
  return (error) => {
    if (isConflict?.(error)) return false;
    const verdict = classify(error, extra);
    return verdict === 'transient' || (verdict === 'unknown' && retryUnknown);
  };
}
