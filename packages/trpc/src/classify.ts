import {
  type ErrorVerdict,
  isCircuitOpenError,
  isConcurrencyLimitError,
  isDeadlineExceededError,
  isOperationAbortedError,
  isQueueFullError,
  isRateLimitError,
  PROPAGATION_HEADERS,
} from '@breakwater/core';
import { checkOptions, DONT_RETRY, keysOf } from '@breakwater/core/internal';
import { type Clock, systemClock } from '@breakwater/core/time';
import { header, retryAfterMsFrom } from './internals/retry-after.js';

/** tRPC error codes (the `data.code` a tRPC server sends). */
export type TRPCErrorCode =
  | 'PARSE_ERROR'
  | 'BAD_REQUEST'
  | 'INTERNAL_SERVER_ERROR'
  | 'NOT_IMPLEMENTED'
  | 'BAD_GATEWAY'
  | 'SERVICE_UNAVAILABLE'
  | 'GATEWAY_TIMEOUT'
  | 'UNAUTHORIZED'
  | 'PAYMENT_REQUIRED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_SUPPORTED'
  | 'TIMEOUT'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNPROCESSABLE_CONTENT'
  | 'PRECONDITION_REQUIRED'
  | 'TOO_MANY_REQUESTS'
  | 'CLIENT_CLOSED_REQUEST';

/** Options of {@link createTRPCErrorClassifier}. */
export interface TRPCErrorClassifierOptions {
  /**
   * tRPC codes retried (and failed over) by default. `TOO_MANY_REQUESTS` is
   * retried only when the server sent `Retry-After`. Defaults to
   * `TIMEOUT`, `TOO_MANY_REQUESTS`, `BAD_GATEWAY`, `SERVICE_UNAVAILABLE`,
   * `GATEWAY_TIMEOUT` (not `INTERNAL_SERVER_ERROR`: core's rule, as gRPC's
   * `INTERNAL`; add it here to retry a procedure's own failures).
   */
  retryableCodes?: readonly TRPCErrorCode[];
  /** Clock used to turn an HTTP-date `Retry-After` into a delay. Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link TRPCErrorClassifierOptions}. @internal */
export const TRPC_CLASSIFIER_KEYS = keysOf<TRPCErrorClassifierOptions>()([
  'retryableCodes',
  'clock',
]);

/*
 * The default verdicts, first match wins:
 *  1. Breakwater refusals in the cause chain: circuit open, rate limit, queue
 *     full → no retry, fail over, not counted, never sent (the server was never asked).
 *  2. Cancellation (OperationAbortedError, AbortError, CLIENT_CLOSED_REQUEST)
 *     → nothing: no retry, no failover, neutral.
 *  3. A Breakwater deadline (DeadlineExceededError) → retry at once (timed out), fail over, count.
 *  4. The tRPC code (`data.code`), else the HTTP status (`data.httpStatus`,
 *     `meta.response.status`, a `status` in the cause chain). Five codes
 *     share JSON-RPC -32603, so the JSON-RPC number is never used.
 *     Retryable codes, else HTTP 502/503/504 → retry, fail over, count.
 *     A server's own failure (INTERNAL_SERVER_ERROR / 500, NOT_IMPLEMENTED,
 *     any other 5xx) → no retry, fail over, count: core's rule, the same as
 *     gRPC's INTERNAL; repeating a buggy procedure triples its load.
 *     429 → retry only with Retry-After, fail over, not counted.
 *     Other 4xx (domain errors) → no retry, no failover, not counted.
 *  5. A connection that was never made (ECONNREFUSED, ENOTFOUND, EAI_AGAIN
 *     anywhere in the cause chain) → retry, fail over, count, never sent: safe
 *     to repeat for any call. A browser's fetch rejecting before any response
 *     (a bare `TypeError` "Failed to fetch" / "NetworkError when attempting to
 *     fetch resource." / "Load failed", no cause) is judged the same: the
 *     browser hides why, and a refused connection is by far the usual case
 *     (routingLink already fails over on it). Other network failures (Node's
 *     `fetch failed` without a refused connection below it, ECONNRESET,
 *     ETIMEDOUT, EPIPE, UND_ERR_SOCKET, "terminated") → retry, fail over,
 *     count, but not "never sent": the request may have reached the server.
 *  6. Anything else → no retry, fail over, counted.
 */
const DEFAULT_CODES: readonly TRPCErrorCode[] = [
  'TIMEOUT',
  'TOO_MANY_REQUESTS',
  'BAD_GATEWAY',
  'SERVICE_UNAVAILABLE',
  'GATEWAY_TIMEOUT',
];
const STATUS_BY_CODE: Partial<Record<string, number>> = {
  BAD_REQUEST: 400,
  PARSE_ERROR: 400,
  TIMEOUT: 408,
  TOO_MANY_REQUESTS: 429,
  CLIENT_CLOSED_REQUEST: 499,
  INTERNAL_SERVER_ERROR: 500,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  SERVICE_UNAVAILABLE: 503,
  GATEWAY_TIMEOUT: 504,
};
// A code-less answer: only a gateway or an overloaded server says "try again" (gRPC maps these to UNAVAILABLE).
const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'NETWORK_ERROR',
]);
// No connection was made: the request provably never reached a server.
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);
const NETWORK_MESSAGE = /^(fetch failed|terminated|other side closed|socket hang up)$/i;
/** How Chromium, Firefox and Safari word a fetch that got no response. */
const BROWSER_FETCH_FAILED =
  /^(Failed to fetch|NetworkError when attempting to fetch resource\.|Load failed)$/;

// Shared frozen verdicts: classifying allocates only when Retry-After is present.
const RETRY: ErrorVerdict = Object.freeze({ retry: true, failover: true, countForCircuit: true });
/** A Breakwater deadline passed: the attempt already waited, so it is retried at once. */
const TIMED_OUT: ErrorVerdict = Object.freeze({ ...RETRY, timedOut: true });
const NEVER_SENT: ErrorVerdict = Object.freeze({
  retry: true,
  failover: true,
  countForCircuit: true,
  neverSent: true,
});
const REFUSED: ErrorVerdict = Object.freeze({
  retry: false,
  failover: true,
  countForCircuit: false,
  neverSent: true,
});
const LIMITED: ErrorVerdict = Object.freeze({
  retry: false,
  failover: true,
  countForCircuit: false,
});
const CANCELLED: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: false,
});
// A 4xx domain error: the server is healthy and answered; nothing to retry, move or count.
const DOMAIN: ErrorVerdict = Object.freeze({
  retry: false,
  failover: false,
  countForCircuit: false,
});
const FAILED: ErrorVerdict = Object.freeze({ retry: false, failover: true, countForCircuit: true });

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function asStatus(value: unknown): number | undefined {
  return typeof value === 'number' && value >= 100 && value <= 599 ? value : undefined;
}

/** The HTTP response tRPC kept for this error (`meta.response`), if any. */
function responseOf(error: unknown): unknown {
  return field(field(error, 'meta'), 'response');
}

/**
 * Builds a classifier that maps a `TRPCClientError` (or any error a link
 * sees) to an `ErrorVerdict`. Pure apart from reading the clock for an
 * HTTP-date `Retry-After`.
 * @example
 * const classify = createTRPCErrorClassifier({ retryableCodes: ['SERVICE_UNAVAILABLE'] });
 */
export function createTRPCErrorClassifier(
  options: TRPCErrorClassifierOptions = {},
): (error: unknown) => ErrorVerdict {
  checkOptions('createTRPCErrorClassifier', options, TRPC_CLASSIFIER_KEYS);
  const codes = new Set<string>(options.retryableCodes ?? DEFAULT_CODES);
  const clock = options.clock ?? systemClock;

  const byStatus = (status: number, code: unknown, error: unknown): ErrorVerdict => {
    if (status === 429 || code === 'TOO_MANY_REQUESTS') {
      const retryAfterMs = retryAfterMsFrom(responseOf(error), clock);
      if (retryAfterMs === undefined || !codes.has('TOO_MANY_REQUESTS')) return LIMITED;
      return { retry: true, failover: true, countForCircuit: false, retryAfterMs };
    }
    const retryable = typeof code === 'string' ? codes.has(code) : UNAVAILABLE_STATUSES.has(status);
    if (!retryable) return status >= 500 ? FAILED : DOMAIN;
    const retryAfterMs = retryAfterMsFrom(responseOf(error), clock);
    return retryAfterMs === undefined ? RETRY : { ...RETRY, retryAfterMs };
  };

  return (error) => {
    // A Breakwater server whose own downstream is overloaded: retrying here would only multiply.
    if (header(responseOf(error), PROPAGATION_HEADERS.http.retry) === 'no') return DONT_RETRY;
    // Breakwater's own 429: never sent, so another provider may take it at once.
    if (isConcurrencyLimitError(field(error, 'cause'))) return REFUSED;
    const data = field(error, 'data');
    const code = field(data, 'code');
    if (code === 'CLIENT_CLOSED_REQUEST') return CANCELLED;
    const status =
      asStatus(field(data, 'httpStatus')) ??
      (typeof code === 'string' ? STATUS_BY_CODE[code] : undefined) ??
      asStatus(field(responseOf(error), 'status'));
    if (status !== undefined) return byStatus(status, code, error);
    // No server verdict: look through the cause chain (bounded, cycles are possible).
    let e: unknown = error;
    let network = false;
    for (let depth = 0; depth < 6 && typeof e === 'object' && e !== null; depth++) {
      if (isCircuitOpenError(e) || isRateLimitError(e) || isQueueFullError(e)) return REFUSED;
      if (isOperationAbortedError(e) || field(e, 'name') === 'AbortError') return CANCELLED;
      if (isDeadlineExceededError(e)) return TIMED_OUT;
      const s = asStatus(field(e, 'status'));
      if (s !== undefined) return byStatus(s, undefined, e);
      const c = field(e, 'code');
      if (typeof c === 'string' && NOT_CONNECTED.has(c)) return NEVER_SENT;
      if (typeof c === 'string' && NETWORK_CODES.has(c)) return RETRY;
      const m = field(e, 'message');
      if (
        field(e, 'name') === 'TypeError' &&
        typeof m === 'string' &&
        BROWSER_FETCH_FAILED.test(m) &&
        field(e, 'cause') === undefined
      ) {
        return NEVER_SENT;
      }
      // `fetch failed` wraps the real cause: look deeper for a connection never made.
      if (typeof m === 'string' && NETWORK_MESSAGE.test(m)) network = true;
      e = field(e, 'cause');
    }
    return network ? RETRY : FAILED;
  };
}

/**
 * The default tRPC classifier ({@link createTRPCErrorClassifier} with its
 * defaults): network failures, 502/503/504, `TIMEOUT` and Breakwater
 * deadlines are retried; `INTERNAL_SERVER_ERROR` (500) and other 5xx are
 * not, but count for the circuit; `TOO_MANY_REQUESTS` only with `Retry-After`; 4xx
 * domain errors never. A connection refused (or a name that did not
 * resolve, or a browser fetch that got no response) and Breakwater's own
 * refusals are marked `neverSent`.
 */
export const classifyTRPCError: (error: unknown) => ErrorVerdict = createTRPCErrorClassifier();
