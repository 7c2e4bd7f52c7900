import {
  type Backoff,
  type BackoffOptions,
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

/** Options of {@link retryInterceptor}. */
export interface RetryInterceptorOptions {
  /** Methods safe to repeat (see `idempotentMethods`); others are never retried. Defaults to none. */
  idempotent?: MethodSelector;
  /** Attempts per call, the first included (integer >= 1). Defaults to 3. */
  attempts?: number;
  /** Delay schedule between attempts: a core `Backoff` or its options. Defaults to exponential from 100 ms, full jitter, capped at 5 s. */
  backoff?: Backoff | BackoffOptions;
  /** Shared retry budget (`createRetryBudget`); a refused retry ends the call with its last status. Defaults to none. */
  budget?: RetryBudget;
  /** Status → verdict. Defaults to `createGrpcStatusClassifier()` (SPEC §9 defaults). */
  classify?: GrpcStatusClassifier;
  /** Deadline of each attempt (never past the call's); makes `DEADLINE_EXCEEDED` retryable. Defaults to none. */
  perAttemptTimeout?: Duration;
  /** Retry server-streaming calls until their first response message. Defaults to true. */
  serverStreaming?: boolean;
  /** Called before each retry (method, attempt number, delay, code). Defaults to none. */
  onRetry?: (event: GrpcRetryEvent) => void;
  /** Time source for deadlines. Defaults to `systemClock`. */
  clock?: Clock;
  /** How backoff waits. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link RetryInterceptorOptions}. @internal */
export const RETRY_KEYS = {
  idempotent: true,
  attempts: true,
  backoff: true,
  budget: true,
  classify: true,
  perAttemptTimeout: true,
  serverStreaming: true,
  onRetry: true,
  clock: true,
  sleep: true,
} as const satisfies KnownKeys<RetryInterceptorOptions>;

/**
 * Retries failed unary and server-streaming calls of idempotent methods
 * (server streams only until their first message). Every attempt re-sends
 * the buffered request metadata and message with `grpc-previous-rpc-attempts`,
 * keeps the call's absolute deadline (so it gets only the remaining time),
 * honours `grpc-retry-pushback-ms`, and waits out backoff itself, so
 * `call.cancel()` during a wait ends the call at once with `CANCELLED`.
 * Client and bidi streams pass through untouched.
 * @example
 * const client = new EchoClient(address, credentials.createInsecure(), {
 *   interceptors: [retryInterceptor({ idempotent: idempotentMethods(packageDefinition) })],
 *   'grpc.enable_retries': 0,
 * });
 */
export function retryInterceptor(options: RetryInterceptorOptions = {}): Interceptor {
  return stageInterceptor([optionPath('', () => retryStage(options), 'retryInterceptor')]);
}

/** The stage of {@link retryInterceptor}. @internal */
export function retryStage(options: RetryInterceptorOptions): Stage {
  checkOptions(undefined, options, RETRY_KEYS, '', false);
  const maxAttempts = checkAttempts('attempts', options.attempts, 3);
  const isSafe = compileSelector('idempotent', options.idempotent);
  const backoff = resolveBackoff(options.backoff);
  const perAttemptTimeoutMs =
    options.perAttemptTimeout === undefined
      ? undefined
      : parseDuration('perAttemptTimeout', options.perAttemptTimeout);
  const classify = options.classify ?? createGrpcStatusClassifier();
  const serverStreaming = options.serverStreaming ?? true;
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  return attemptStage((method) => {
    if (maxAttempts < 2 || method.requestStream || !isSafe(method.path)) return undefined;
    if (method.responseStream && !serverStreaming) return undefined;
    return {
      path: method.path,
      responseStream: method.responseStream,
      maxAttempts,
      hedgeDelayMs: undefined,
      perAttemptTimeoutMs,
      backoff,
      budget: options.budget,
      classify,
      clock,
      sleep,
      onRetry: options.onRetry,
    };
  });
}
