import { checkOptions, type ErrorVerdict, type KnownKeys, optionPath } from '@breakwater/core';
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

/** Keys of {@link ResilienceLinkOptions}. @internal */
export const RESILIENCE_LINK_KEYS = {
  bulkhead: true,
  rateLimit: true,
  timeout: true,
  retry: true,
  hedge: true,
  circuit: true,
  attemptTimeout: true,
  classify: true,
} as const satisfies KnownKeys<ResilienceLinkOptions>;

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
  // Every message names this factory and the full path: `resilienceLink: retry.backoff.baseDelayMs ...`.
  return optionPath('', () => build<TRouter>(options), 'resilienceLink');
}

function build<TRouter extends AnyRouter>(options: ResilienceLinkOptions): TRPCLink<TRouter> {
  checkOptions(undefined, options, RESILIENCE_LINK_KEYS);
  const classify = options.classify;
  const withClassify = <T extends { classify?: unknown }>(o: T): T =>
    classify && o.classify === undefined ? { ...o, classify } : o;
  // Stateful pieces are built once and shared by the fused path and the composed links.
  const { bulkhead, rateLimit, timeout, hedge, attemptTimeout } = options;
  const at = optionPath;
  const pool = bulkhead ? at('bulkhead', () => resolvePool(bulkhead.pool)) : undefined;
  const bucket = rateLimit ? at('rateLimit', () => resolveBucket(rateLimit.bucket)) : undefined;
  const timeoutFor = timeout ? at('timeout', () => resolveTimeoutFor(timeout)) : undefined;
  const retry = options.retry;
  const retrySettings = retry ? at('retry', () => resolveRetry(withClassify(retry))) : undefined;
  const circuitOptions = options.circuit;
  const circuit = circuitOptions
    ? at('circuit', () => resolveCircuits(withClassify(circuitOptions)))
    : undefined;

  const links: TRPCLink<TRouter>[] = [];
  if (bulkhead && pool) links.push(at('bulkhead', () => bulkheadLink({ ...bulkhead, pool })));
  if (rateLimit && bucket)
    links.push(at('rateLimit', () => rateLimitLink({ ...rateLimit, bucket })));
  if (timeoutFor) links.push(deadlineLink({ timeoutFor }));
  if (retrySettings) links.push(retryLinkFrom(retrySettings));
  if (hedge) links.push(at('hedge', () => hedgeLink(withClassify(hedge))));
  if (circuit) links.push(circuitBreakerLinkFrom(circuit));
  if (attemptTimeout) links.push(at('attemptTimeout', () => deadlineLink(attemptTimeout)));
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
    retry: retrySettings,
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
