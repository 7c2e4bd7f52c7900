/**
 * What a classifier or `errorPolicy` decides about one failed attempt. Every
 * field defaults to `true` when omitted (except `retryAfterMs`). Adapters map
 * framework errors into this shape; policy logic stays in core.
 */
export interface ErrorVerdict {
  /** Try this provider/operation again. Defaults to true. */
  retry?: boolean;
  /** Move on to another provider (routing). Defaults to true. */
  failover?: boolean;
  /** Count the failure toward circuits and health. Defaults to true. */
  countForCircuit?: boolean;
  /**
   * Server pushback in ms: the retry waits exactly this long instead of its
   * backoff (gRFC A6); negative or not a number means "do not retry".
   * Defaults to none (the backoff applies).
   */
  retryAfterMs?: number;
  /**
   * The request provably never reached the server (connection refused, no
   * stream opened, refused locally before sending): repeating it is safe for
   * any call, idempotent or not. Defaults to false.
   */
  neverSent?: boolean;
  /**
   * The server turned the attempt away without processing it (gRPC
   * `UNAVAILABLE`: it cannot take the call now). With the default backoff,
   * the call's first retry after such a failure starts at once — over a
   * multi-replica channel it lands on another replica, so a wait would only
   * add latency — and later retries back off; a backoff you give is waited
   * every time. `neverSent` implies it. Defaults to false.
   */
  unprocessed?: boolean;
  /**
   * The attempt ran out its own deadline: it already waited, so its retry
   * starts at once, without backoff (pushback still applies). Core's own
   * timeouts (`DeadlineExceededError`) count without it. Defaults to false.
   */
  timedOut?: boolean;
}

/** Judges an error after a failed attempt (timeouts included). */
export type ErrorPolicy = (error: unknown) => ErrorVerdict;
