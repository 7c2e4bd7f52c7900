import { checkOptions, type KnownKeys, optionPath } from '@breakwater/core';
import type { GrpcStatusClassifier, MethodSelector } from '@breakwater/core/grpc';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  composeClientMiddleware,
} from 'nice-grpc-common';
import {
  type BulkheadMiddlewareOptions,
  bulkheadMiddlewareOf,
  bulkheadStage,
} from './bulkhead-middleware.js';
import {
  type CircuitBreakerMiddlewareOptions,
  circuitBreakerMiddlewareOf,
  circuitBreakerStage,
} from './circuit-breaker-middleware.js';
import {
  type DeadlineCallOptions,
  type DeadlineMiddlewareOptions,
  type DeadlineStage,
  deadlineMiddlewareOf,
  deadlineStage,
} from './deadline-middleware.js';
import {
  type HedgingCallOptions,
  type HedgingMiddlewareOptions,
  hedgingMiddleware,
} from './hedging-middleware.js';
import { guardStage } from './internals/guard-stage.js';
import { UnaryChain, type UnaryStage } from './internals/unary-stage.js';
import {
  type RateLimitMiddlewareOptions,
  rateLimitMiddlewareOf,
  rateLimitStage,
} from './rate-limit-middleware.js';
import {
  type RetryCallOptions,
  type RetryMiddlewareOptions,
  retryMiddlewareOf,
  retryStage,
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

/** Keys of {@link ResilienceMiddlewareOptions}. @internal */
export const RESILIENCE_KEYS = {
  idempotent: true,
  classify: true,
  deadline: true,
  circuitBreaker: true,
  rateLimit: true,
  bulkhead: true,
  retry: true,
  hedge: true,
} as const satisfies KnownKeys<ResilienceMiddlewareOptions>;

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
  return optionPath('', () => build(options), 'resilienceMiddleware');
}

function build(options: ResilienceMiddlewareOptions): ClientMiddleware<ResilienceCallOptions> {
  checkOptions(undefined, options, RESILIENCE_KEYS);
  const shared = {
    ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
    ...(options.classify === undefined ? {} : { classify: options.classify }),
  };
  // Each part once, as a unary stage; its middleware (for streams) wraps the same stage,
  // so both call kinds share the circuits, the bucket, the pool and the budget.
  const retry = options.retry ? { ...shared, ...options.retry } : undefined;
  const stages: UnaryStage[] = [];
  const stack: ClientMiddleware<ResilienceCallOptions>[] = [];
  let deadline: DeadlineStage | undefined;
  if (options.deadline) {
    // With a retry stage below, the header is written there (once per call).
    const own = options.deadline;
    const stage = optionPath('deadline', () => deadlineStage(own, retry === undefined));
    deadline = stage;
    // Outermost, so the generator below catches for it (one async step less a call).
    stages.push({ unary: stage.untranslated });
    stack.push(deadlineMiddlewareOf(options.hedge ? deadlineStage(options.deadline, true) : stage));
  }
  const { circuitBreaker, rateLimit: limit, bulkhead: slots } = options;
  // The breaker takes no `idempotent`: hand it the shared classifier only.
  const classify = shared.classify === undefined ? {} : { classify: shared.classify };
  const circuit = circuitBreaker
    ? optionPath('circuitBreaker', () => circuitBreakerStage({ ...classify, ...circuitBreaker }))
    : undefined;
  const rateLimit = limit ? optionPath('rateLimit', () => rateLimitStage(limit)) : undefined;
  const bulkhead = slots ? optionPath('bulkhead', () => bulkheadStage(slots)) : undefined;
  if (circuit) stack.push(circuitBreakerMiddlewareOf(circuit));
  if (rateLimit) stack.push(rateLimitMiddlewareOf(rateLimit));
  if (bulkhead) stack.push(bulkheadMiddlewareOf(bulkhead));
  // The three run as one unary stage (one async step a call, not up to three);
  // a rate limit alone stays the plain (not async) stage it is.
  if (circuit || bulkhead) stages.push(guardStage(circuit, rateLimit, bulkhead));
  else if (rateLimit) stages.push(rateLimit);
  const { hedge } = options;
  if (hedge) stack.push(optionPath('hedge', () => hedgingMiddleware({ ...shared, ...hedge })));
  if (retry !== undefined) {
    const stamp = options.deadline !== undefined && options.deadline !== false;
    stages.push(optionPath('retry', () => retryStage(retry, stamp)));
    stack.push(retryMiddlewareOf(retryStage(retry, false)));
  }
  const composed = compose(stack);
  if (composed === undefined) return passThrough;
  // A hedged call's attempts go through the retry middleware below it: keep the composed chain.
  if (options.hedge) return composed;
  const chain = new UnaryChain(stages);
  return async function* resilienceMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & ResilienceCallOptions,
  ) {
    if (call.responseStream) return yield* composed(call, callOptions);
    try {
      return await chain.next(call as ClientMiddlewareCall<unknown, Response>, callOptions, 0);
    } catch (error) {
      throw deadline === undefined
        ? error
        : deadline.translate(error, call.method.path, callOptions);
    }
  };
}

/** The middleware running `stack` outermost first, `undefined` for none. */
function compose(
  stack: ClientMiddleware<ResilienceCallOptions>[],
): ClientMiddleware<ResilienceCallOptions> | undefined {
  let composed = stack.pop();
  if (composed === undefined) return undefined;
  // composeClientMiddleware(inner, outer) runs `outer` first.
  for (let i = stack.length - 1; i >= 0; i--) {
    composed = composeClientMiddleware(
      composed,
      stack[i] as ClientMiddleware<ResilienceCallOptions>,
    );
  }
  return composed;
}
