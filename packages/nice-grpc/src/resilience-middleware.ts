import type { GrpcStatusClassifier, MethodSelector } from '@breakwater/grpc-js';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  composeClientMiddleware,
} from 'nice-grpc-common';
import { type BulkheadMiddlewareOptions, bulkheadMiddleware } from './bulkhead-middleware.js';
import {
  type CircuitBreakerMiddlewareOptions,
  circuitBreakerMiddleware,
} from './circuit-breaker-middleware.js';
import {
  type DeadlineCallOptions,
  type DeadlineMiddlewareOptions,
  deadlineMiddleware,
} from './deadline-middleware.js';
import {
  type HedgingCallOptions,
  type HedgingMiddlewareOptions,
  hedgingMiddleware,
} from './hedging-middleware.js';
import { type RateLimitMiddlewareOptions, rateLimitMiddleware } from './rate-limit-middleware.js';
import {
  type RetryCallOptions,
  type RetryMiddlewareOptions,
  retryMiddleware,
} from './retry-middleware.js';

/** Per-call options of {@link resilienceMiddleware}: those of its parts. */
export type ResilienceCallOptions = DeadlineCallOptions & RetryCallOptions & HedgingCallOptions;

/** Options of {@link resilienceMiddleware}: each part is off unless given (`false` also turns it off). */
export interface ResilienceMiddlewareOptions {
  /** Methods safe to repeat, used by `retry` and `hedge` unless they name their own. Defaults to none (definitions' `idempotencyLevel` still counts). */
  idempotent?: MethodSelector;
  /** Status → verdict for every part. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Deadlines from budgets and the `deadline` call option, sent to the server. Defaults to off. */
  deadline?: DeadlineMiddlewareOptions | false;
  /** Circuit breaking. Defaults to off. */
  circuitBreaker?: CircuitBreakerMiddlewareOptions | false;
  /** Token-bucket rate limit. Defaults to off. */
  rateLimit?: RateLimitMiddlewareOptions | false;
  /** Concurrency limit. Defaults to off. */
  bulkhead?: BulkheadMiddlewareOptions | false;
  /** Retries. Defaults to off. */
  retry?: RetryMiddlewareOptions | false;
  /** Hedging (instead of retries) for the calls it hedges. Defaults to off. */
  hedge?: HedgingMiddlewareOptions | false;
}

const passThrough: ClientMiddleware = async function* passThrough<Request, Response>(
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
) {
  return yield* call.next(call.request, options);
};

/**
 * One middleware with the whole Breakwater stack, in this order (outermost first):
 *
 * 1. `deadline` — the call's deadline covers everything below (queueing, retries, backoff);
 * 2. `circuitBreaker` — an open circuit refuses before any token or slot is spent,
 *    and a call counts once, after its retries;
 * 3. `rateLimit` — one token per call, not per attempt;
 * 4. `bulkhead` — one slot covers the call with all its attempts and backoff;
 * 5. `hedge`, then `retry` — attempts go to the channel. A call the hedging part
 *    hedges is not also retried (attempts never multiply).
 *
 * With `createClientFactory().use(a).use(b)` nice-grpc runs `b` first; this
 * middleware is one `use()`, so the order above holds whatever else you add.
 * @example
 * const client = createClientFactory()
 *   .use(resilienceMiddleware({
 *     deadline: { timeout: '2s' },
 *     circuitBreaker: { breaker: { failureThreshold: 5, openDurationMs: 10_000 } },
 *     retry: { budget: createRetryBudget({}) },
 *   }))
 *   .create(EchoDefinition, channel);
 */
export function resilienceMiddleware(
  options: ResilienceMiddlewareOptions = {},
): ClientMiddleware<ResilienceCallOptions> {
  const shared = {
    ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
    ...(options.classify === undefined ? {} : { classify: options.classify }),
  };
  const stack: ClientMiddleware<ResilienceCallOptions>[] = [];
  if (options.deadline) stack.push(deadlineMiddleware(options.deadline));
  if (options.circuitBreaker) {
    stack.push(circuitBreakerMiddleware({ ...shared, ...options.circuitBreaker }));
  }
  if (options.rateLimit) stack.push(rateLimitMiddleware(options.rateLimit));
  if (options.bulkhead) stack.push(bulkheadMiddleware(options.bulkhead));
  if (options.hedge) stack.push(hedgingMiddleware({ ...shared, ...options.hedge }));
  if (options.retry) stack.push(retryMiddleware({ ...shared, ...options.retry }));
  let composed = stack.pop();
  if (composed === undefined) return passThrough;
  // composeClientMiddleware(inner, outer) runs `outer` first.
  for (let i = stack.length - 1; i >= 0; i--) {
    composed = composeClientMiddleware(
      composed,
      stack[i] as ClientMiddleware<ResilienceCallOptions>,
    );
  }
  return composed;
}
