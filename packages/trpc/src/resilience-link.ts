import type { ErrorVerdict } from '@breakwater/core';
import type { Operation, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { type BulkheadLinkOptions, bulkheadLink, resolvePool } from './bulkhead-link.js';
import {
  type CircuitBreakerLinkOptions,
  circuitBreakerLinkFrom,
  resolveCircuits,
} from './circuit-breaker-link.js';
import { type DeadlineLinkOptions, deadlineLink, resolveTimeoutFor } from './deadline-link.js';
import { type HedgeLinkOptions, hedgeLink } from './hedge-link.js';
import { composeLinks } from './internals/compose.js';
import { FusedObservable, type FusedPlan, type Next } from './internals/fused-call.js';
import { type RateLimitLinkOptions, rateLimitLink, resolveBucket } from './rate-limit-link.js';
import { type RetryLinkOptions, resolveRetry, retryLinkFrom } from './retry-link.js';

/** Options of {@link resilienceLink}: each piece is on when its option is given. */
export interface ResilienceLinkOptions {
  /** Concurrency cap over whole calls, retries included. Defaults to off. */
  bulkhead?: BulkheadLinkOptions;
  /** Client-side rate limit on calls. Defaults to off. */
  rateLimit?: RateLimitLinkOptions;
  /** Deadline of the whole call, all attempts and backoff included. Defaults to off. */
  timeout?: DeadlineLinkOptions;
  /** Retries (`{}` for the defaults). Defaults to off. */
  retry?: RetryLinkOptions;
  /** Hedged requests for queries. Defaults to off. */
  hedge?: HedgeLinkOptions;
  /** Circuit breaker, judging every attempt and hedge. Defaults to off. */
  circuit?: CircuitBreakerLinkOptions;
  /** Deadline of each attempt (a hung attempt fails, counts for the circuit and is retried). Defaults to off. */
  attemptTimeout?: DeadlineLinkOptions;
  /** Classifier given to retry, hedge and circuit unless they set their own. Defaults to `classifyTRPCError`. */
  classify?: (error: unknown, op: Operation) => ErrorVerdict;
}

/**
 * One link composing the Breakwater links in this order, outermost first:
 *
 * 1. `bulkhead` — a slot covers the whole call, like `protect()`;
 * 2. `rateLimit` — callers' calls spend tokens, retries do not;
 * 3. `timeout` — the caller's total budget, backoff included;
 * 4. `retry` — decides per attempt with the classifier;
 * 5. `hedge` — extra copies of a slow attempt;
 * 6. `circuit` — sees every attempt and hedge, so an open circuit stops
 *    them before they are sent (and a refusal is not retried);
 * 7. `attemptTimeout` — bounds each attempt, so a hung server counts as a failure.
 *
 * Pieces left out cost nothing. Put it before the terminating link.
 *
 * Without `hedge`, `attemptTimeout` or a waiting rate limit, a query or
 * mutation runs through one call object doing all of the above (one
 * observable and no closures per call instead of five links); it behaves
 * exactly as the composed links do, which run subscriptions and calls that
 * must queue for a bulkhead slot.
 * @example
 * links: [resilienceLink({ retry: {}, circuit: {}, attemptTimeout: { timeoutMs: '2s' } }), httpBatchLink({ url })]
 */
export function resilienceLink<TRouter extends AnyRouter = AnyRouter>(
  options: ResilienceLinkOptions,
): TRPCLink<TRouter> {
  const classify = options.classify;
  const withClassify = <T extends { classify?: unknown }>(o: T): T =>
    classify && o.classify === undefined ? { ...o, classify } : o;
  // Stateful pieces are built once and shared by the fused path and the composed links.
  const pool = options.bulkhead ? resolvePool(options.bulkhead.pool) : undefined;
  const bucket = options.rateLimit ? resolveBucket(options.rateLimit.bucket) : undefined;
  const timeoutFor = options.timeout ? resolveTimeoutFor(options.timeout) : undefined;
  const retry = options.retry ? resolveRetry(withClassify(options.retry)) : undefined;
  const circuit = options.circuit ? resolveCircuits(withClassify(options.circuit)) : undefined;

  const links: TRPCLink<TRouter>[] = [];
  if (options.bulkhead && pool) links.push(bulkheadLink({ ...options.bulkhead, pool }));
  if (options.rateLimit && bucket) links.push(rateLimitLink({ ...options.rateLimit, bucket }));
  if (timeoutFor) links.push(deadlineLink({ timeoutFor }));
  if (retry) links.push(retryLinkFrom(retry));
  if (options.hedge) links.push(hedgeLink(withClassify(options.hedge)));
  if (circuit) links.push(circuitBreakerLinkFrom(circuit));
  if (options.attemptTimeout) links.push(deadlineLink(options.attemptTimeout));
  const composed = composeLinks(links);

  // Hedges, per-attempt deadlines and waiting for tokens run as composed links only.
  const fusable =
    links.length > 0 &&
    !options.hedge &&
    !options.attemptTimeout &&
    (options.rateLimit?.mode ?? 'reject') === 'reject';
  if (!fusable) return composed;
  const plan: FusedPlan = {
    pool,
    bucket,
    cost: options.rateLimit?.cost,
    timeoutFor,
    retry,
    circuit,
  };
  return (runtime) => {
    const slow = composed(runtime);
    return ({ op, next }) =>
      // Subscriptions, and calls that must queue for a slot, take the composed links.
      op.type === 'subscription'
        ? slow({ op, next })
        : (new FusedObservable(plan, op, next as Next, slow) as unknown as ReturnType<typeof slow>);
  };
}
