import {
  type Clock,
  checkOptions,
  type Duration,
  type KnownKeys,
  optionPath,
  parseDuration,
  type RetryBudget,
  type Sleep,
  systemClock,
  systemSleep,
} from '@breakwater/core';
import {
  checkAttempts,
  compileSelector,
  createGrpcStatusClassifier,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
  resolveBackoff,
} from '@breakwater/core/grpc';
import type { Interceptor } from '@grpc/grpc-js';
import { attemptStage } from './internals/attempt-interceptor.js';
import { type Stage, stageInterceptor } from './internals/stage.js';

/** Options of {@link hedgingInterceptor}. */
export interface HedgingInterceptorOptions {
  /** Methods safe to send more than once; only these are hedged. Defaults to none. */
  idempotent?: MethodSelector;
  /** Start another attempt when none has answered within this delay. Required. */
  delay: Duration;
  /** Attempts in flight at most, the first included (integer >= 2). Defaults to 2. */
  attempts?: number;
  /** Shared retry budget; each hedge withdraws from it. Defaults to none. */
  budget?: RetryBudget;
  /** Status → verdict; a non-retryable status ends the call at once. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Called before each hedge (method, attempt number, delay). Defaults to none. */
  onHedge?: (event: GrpcRetryEvent) => void;
  /** Time source for deadlines. Defaults to `systemClock`. */
  clock?: Clock;
  /** How the hedging delay is waited. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link HedgingInterceptorOptions}. @internal */
export const HEDGING_KEYS = {
  idempotent: true,
  delay: true,
  attempts: true,
  budget: true,
  classify: true,
  onHedge: true,
  clock: true,
  sleep: true,
} as const satisfies KnownKeys<HedgingInterceptorOptions>;

/**
 * Hedges unary and server-streaming calls of idempotent methods: when the
 * first attempt has not answered within `delay`, a second one starts; the
 * first answer wins and the others are cancelled. A retryable failure starts
 * the next hedge at once. Use it instead of `retryInterceptor` for a method.
 */
export function hedgingInterceptor(options: HedgingInterceptorOptions): Interceptor {
  return stageInterceptor([optionPath('', () => hedgingStage(options), 'hedgingInterceptor')]);
}

/** The stage of {@link hedgingInterceptor}. @internal */
export function hedgingStage(options: HedgingInterceptorOptions): Stage {
  checkOptions(undefined, options, HEDGING_KEYS, '', false);
  const hedgeDelayMs = parseDuration('delay', options.delay);
  const maxAttempts = checkAttempts('attempts', options.attempts, 2);
  const isSafe = compileSelector('idempotent', options.idempotent);
  const classify = options.classify ?? createGrpcStatusClassifier();
  const backoff = resolveBackoff(undefined);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  return attemptStage((method) => {
    if (maxAttempts < 2 || method.requestStream || !isSafe(method.path)) return undefined;
    return {
      path: method.path,
      responseStream: method.responseStream,
      maxAttempts,
      hedgeDelayMs,
      perAttemptTimeoutMs: undefined,
      backoff,
      budget: options.budget,
      classify,
      clock,
      sleep,
      onRetry: options.onHedge,
    };
  });
}
