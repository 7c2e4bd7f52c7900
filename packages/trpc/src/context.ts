/**
 * Per-call settings the Breakwater links read from `op.context`, set with
 * `client.x.query(input, { context: { idempotent: true, timeoutMs: 500 } })`.
 */
export interface BreakwaterOperationContext {
  /**
   * This call is safe to repeat (`true`) or not (`false`), overriding the
   * link's `idempotent` option. Defaults to the link's option.
   */
  idempotent?: boolean;
  /** Deadline of this call in ms, overriding the link's `timeoutMs`. Defaults to the link's. */
  timeoutMs?: number;
}
