import type { Operation } from '@trpc/client';

/**
 * Per-call settings the Breakwater links read from `op.context`, set with
 * `client.x.query(input, { context: { idempotent: true, timeoutMs: 500 } })`.
 */
export interface BreakwaterOperationContext {
  /**
   * The call is safe to repeat: `true` lets `retryLink` and `hedgeLink`
   * repeat a mutation; `false` stops them repeating a query. Defaults to
   * "queries yes, mutations no".
   */
  idempotent?: boolean;
  /** Deadline of this call in ms, overriding `deadlineLink`'s budget (unless the link has `timeoutFor`). Defaults to the link's budget. */
  timeoutMs?: number;
}

/**
 * Whether `op` may be sent more than once (retried or hedged): queries
 * unless the caller said `idempotent: false`; mutations only with
 * `idempotent: true` or the link's own opt-in.
 * @internal
 */
export function isRepeatable(op: Operation, mutationsOptIn: boolean): boolean {
  const flag = (op.context as BreakwaterOperationContext).idempotent;
  if (op.type === 'mutation') return flag === true || (mutationsOptIn && flag !== false);
  return flag !== false;
}
