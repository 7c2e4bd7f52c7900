import type { ErrorVerdict } from '@breakwater/core';
import type { Operation, TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import { type BulkheadLinkOptions, bulkheadLink } from './bulkhead-link.js';
import { type CircuitBreakerLinkOptions, circuitBreakerLink } from './circuit-breaker-link.js';
import { type DeadlineLinkOptions, deadlineLink } from './deadline-link.js';
import { type HedgeLinkOptions, hedgeLink } from './hedge-link.js';
import { composeLinks } from './internals/compose.js';
import { type RateLimitLinkOptions, rateLimitLink } from './rate-limit-link.js';
import { type RetryLinkOptions, retryLink } from './retry-link.js';

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
 * @example
 * links: [resilienceLink({ retry: {}, circuit: {}, attemptTimeout: { timeoutMs: '2s' } }), httpBatchLink({ url })]
 */
export function resilienceLink<TRouter extends AnyRouter = AnyRouter>(
  options: ResilienceLinkOptions,
): TRPCLink<TRouter> {
  const classify = options.classify;
  const withClassify = <T extends { classify?: unknown }>(o: T): T =>
    classify && o.classify === undefined ? { ...o, classify } : o;
  const links: TRPCLink<TRouter>[] = [];
  if (options.bulkhead) links.push(bulkheadLink(options.bulkhead));
  if (options.rateLimit) links.push(rateLimitLink(options.rateLimit));
  if (options.timeout) links.push(deadlineLink(options.timeout));
  if (options.retry) links.push(retryLink(withClassify(options.retry)));
  if (options.hedge) links.push(hedgeLink(withClassify(options.hedge)));
  if (options.circuit) links.push(circuitBreakerLink(withClassify(options.circuit)));
  if (options.attemptTimeout) links.push(deadlineLink(options.attemptTimeout));
  return composeLinks(links);
}
