import { checkOptions, type KnownKeys, optionPath } from '@breakwater/core';
import {
  compileSelector,
  type GrpcStatusClassifier,
  type MethodSelector,
} from '@breakwater/core/grpc';
import type { Interceptor, InterceptorOptions, NextCall } from '@grpc/grpc-js';
import { type BulkheadInterceptorOptions, bulkheadStage } from './bulkhead-interceptor.js';
import {
  type CircuitBreakerInterceptorOptions,
  circuitBreakerStage,
} from './circuit-breaker-interceptor.js';
import { type DeadlineInterceptorOptions, deadlineStage } from './deadline-interceptor.js';
import { type HedgingInterceptorOptions, hedgingStage } from './hedging-interceptor.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { type RateLimitInterceptorOptions, rateLimitStage } from './rate-limit-interceptor.js';
import { type RetryInterceptorOptions, retryStage } from './retry-interceptor.js';

/** Options of {@link resilienceInterceptor}: each part is off unless given (`false` also turns it off). */
export interface ResilienceInterceptorOptions {
  /** Methods safe to repeat, used by `retry` and `hedge` unless they name their own. Defaults to none. */
  idempotent?: MethodSelector;
  /** Status → verdict for every part. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Call deadlines from budgets. Defaults to off. */
  deadline?: DeadlineInterceptorOptions | false;
  /** Circuit breaking. Defaults to off. */
  circuitBreaker?: CircuitBreakerInterceptorOptions | false;
  /** Token-bucket rate limit. Defaults to off. */
  rateLimit?: RateLimitInterceptorOptions | false;
  /** Concurrency limit. Defaults to off. */
  bulkhead?: BulkheadInterceptorOptions | false;
  /** Retries. Defaults to off. */
  retry?: RetryInterceptorOptions | false;
  /** Hedging (instead of retries) for the methods it selects. Defaults to off. */
  hedge?: HedgingInterceptorOptions | false;
}

/** Keys of {@link ResilienceInterceptorOptions}. @internal */
export const RESILIENCE_KEYS = {
  idempotent: true,
  classify: true,
  deadline: true,
  circuitBreaker: true,
  rateLimit: true,
  bulkhead: true,
  retry: true,
  hedge: true,
} as const satisfies KnownKeys<ResilienceInterceptorOptions>;

/**
 * Chains interceptors into one, outermost first (the first sees the call first).
 * @example
 * const stack = composeInterceptors([deadlineInterceptor({ timeout: '2s' }), retryInterceptor()]);
 */
export function composeInterceptors(interceptors: readonly Interceptor[]): Interceptor {
  const list = interceptors.slice();
  if (list.length === 1) return list[0] as Interceptor;
  return (options, nextCall) => {
    let next: NextCall = nextCall;
    for (let i = list.length - 1; i > 0; i--) next = link(list[i] as Interceptor, next);
    return (list[0] as Interceptor)(options, next);
  };
}

// A factory, not an inline arrow assigned to a name: transpilers that keep
// function names (esbuild keepNames, as tsx runs) would rename it per call.
function link(interceptor: Interceptor, below: NextCall): NextCall {
  return (o: InterceptorOptions) => interceptor(o, below);
}

/**
 * One interceptor with the whole Breakwater stack, in this order (outermost first):
 *
 * 1. `deadline` — sets the call deadline first, so everything below works within it;
 * 2. `circuitBreaker` — an open circuit refuses before any token or slot is spent,
 *    and a call counts once, after its retries;
 * 3. `rateLimit` — one token per call, not per attempt;
 * 4. `bulkhead` — one slot covers the call with all its attempts and backoff;
 * 5. `hedge`, then `retry` — attempts go to the channel. A method the hedging
 *    options select is hedged and not also retried (attempts never multiply).
 *
 * grpc-js's own retries would multiply with these: create the channel with
 * `disableGrpcRetries` (`'grpc.enable_retries': 0`). Per-call `interceptors`
 * replace the client's, so pass this interceptor there too when you use them.
 */
export function resilienceInterceptor(options: ResilienceInterceptorOptions = {}): Interceptor {
  return optionPath('', () => build(options), 'resilienceInterceptor');
}

function build(options: ResilienceInterceptorOptions): Interceptor {
  checkOptions(undefined, options, RESILIENCE_KEYS);
  const shared = {
    ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
    ...(options.classify === undefined ? {} : { classify: options.classify }),
  };
  // Stages, not interceptors: one chain with no closure per layer per call.
  const stack: Stage[] = [];
  const { deadline, circuitBreaker, rateLimit, bulkhead } = options;
  if (deadline) stack.push(optionPath('deadline', () => deadlineStage(deadline)));
  if (circuitBreaker) {
    // The breaker takes no `idempotent`: hand it the shared classifier only.
    const own = { ...(shared.classify === undefined ? {} : { classify: shared.classify }) };
    stack.push(
      optionPath('circuitBreaker', () => circuitBreakerStage({ ...own, ...circuitBreaker })),
    );
  }
  if (rateLimit) stack.push(optionPath('rateLimit', () => rateLimitStage(rateLimit)));
  if (bulkhead) stack.push(optionPath('bulkhead', () => bulkheadStage(bulkhead)));
  let hedged: ((path: string) => boolean) | undefined;
  if (options.hedge) {
    const hedge = { ...shared, ...options.hedge };
    stack.push(optionPath('hedge', () => hedgingStage(hedge)));
    const selector = hedge.idempotent;
    hedged = selector === undefined ? undefined : compileSelector('hedge.idempotent', selector);
  }
  if (options.retry) {
    const retry = { ...shared, ...options.retry };
    const safe =
      retry.idempotent === undefined
        ? undefined
        : compileSelector('retry.idempotent', retry.idempotent);
    const notHedged = hedged;
    stack.push(
      optionPath('retry', () =>
        retryStage({
          ...retry,
          idempotent: (path) => (safe?.(path) ?? false) && !(notHedged?.(path) ?? false),
        }),
      ),
    );
  }
  if (stack.length === 0) return (o, next) => next(o) as ReturnType<Interceptor>;
  return stageInterceptor(stack);
}
