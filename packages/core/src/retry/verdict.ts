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
  /** Server pushback: wait at least this long (ms) before the retry. Defaults to none. */
  retryAfterMs?: number;
}

/** Judges an error after a failed attempt (timeouts included). */
export type ErrorPolicy = (error: unknown) => ErrorVerdict;
