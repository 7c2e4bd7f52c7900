import {
  type Backoff,
  type BackoffOptions,
  type Clock,
  checkOptions,
  createBackoff,
  type Duration,
  type KnownKeys,
  optionPath,
  optionRangeError,
  parseDuration,
  type RetryBudget,
  type Sleep,
  systemClock,
  systemSleep,
} from '@breakwater/core';
import type { Interceptor } from '@grpc/grpc-js';
import { attemptStage } from './internals/attempt-interceptor.js';
import type { GrpcRetryEvent } from './internals/multi-attempt-call.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { compileSelector, type MethodSelector } from './method-selector.js';
import { createGrpcStatusClassifier, type GrpcStatusClassifier } from './status-classifier.js';

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

const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 5_000,
  jitter: 'full',
};

/**
 * The adapters' backoff: a ready {@link Backoff} as is, options through `createBackoff`, or
 * 100 ms exponential with full jitter capped at 5 000 ms when `undefined`.
 * @internal
 */
export function resolveBackoff(backoff: Backoff | BackoffOptions | undefined): Backoff {
  if (backoff === undefined) return createBackoff(DEFAULT_BACKOFF);
  return typeof (backoff as Backoff).delayFor === 'function'
    ? (backoff as Backoff)
    : optionPath('backoff', () => createBackoff(backoff as BackoffOptions));
}

/**
 * Validates an attempts option: `fallback` when `undefined`, else an integer >= 1, or a
 * `RangeError` naming the option.
 * @internal
 */
export function checkAttempts(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw optionRangeError(name, `must be an integer >= 1, got ${String(value)}`);
  }
  return value;
}

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
