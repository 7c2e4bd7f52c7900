import {
  type Backoff,
  type BackoffOptions,
  type Clock,
  type Duration,
  parseDuration,
  type RetryBudget,
  type Sleep,
  systemClock,
  systemSleep,
} from '@breakwater/core';
import {
  checkAttempts,
  createGrpcStatusClassifier,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
  resolveBackoff,
} from '@breakwater/grpc-js';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import { idempotencyRule } from './idempotency.js';
import { type MiddlewareResult, streamNext, unaryNext } from './internals/next.js';
import { RetryChain, type RetrySettings } from './internals/retry-chain.js';

/** Per-call options of {@link retryMiddleware} (also accepted as its defaults). */
export interface RetryCallOptions {
  /** Retry this call (`true` also for a method not marked idempotent) or never (`false`). Defaults to whether the method is idempotent. */
  retry?: boolean;
  /** Attempts, the first included (integer >= 1). Defaults to 3. */
  retryAttempts?: number;
  /** Called before each retry with the method, the attempt number, the delay and the failed code. Defaults to none. */
  onRetry?: (event: GrpcRetryEvent) => void;
}

/** Options of {@link retryMiddleware}. */
export interface RetryMiddlewareOptions extends RetryCallOptions {
  /** Methods safe to repeat besides those their definition marks `IDEMPOTENT`/`NO_SIDE_EFFECTS`. Defaults to none. */
  idempotent?: MethodSelector;
  /** Delay schedule between attempts: a core `Backoff` or its options. Defaults to exponential from 100 ms, full jitter, capped at 5 s. */
  backoff?: Backoff | BackoffOptions;
  /** Shared retry budget (`createRetryBudget`); a refused retry ends the call with its last error. Defaults to none. */
  budget?: RetryBudget;
  /** Status → verdict (shared with `@breakwater/grpc-js`). Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Time limit of each unary attempt (never past the call's deadline); makes `DEADLINE_EXCEEDED` retryable. Defaults to none. */
  perAttemptTimeout?: Duration;
  /** Retry server-streaming calls until their first response message. Defaults to true. */
  serverStreaming?: boolean;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How backoff waits. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/**
 * Retries failed unary and server-streaming calls of idempotent methods
 * (server streams only until their first message), with the gRPC status
 * classifier of `@breakwater/grpc-js`: `UNAVAILABLE` by default,
 * `RESOURCE_EXHAUSTED` only after the server's `grpc-retry-pushback-ms`,
 * never a caller error such as `INVALID_ARGUMENT`. `retryAttempts` counts
 * attempts, the first included. Every retry carries
 * `grpc-previous-rpc-attempts`, and, when the call has a `deadline`, only
 * the time left as `grpc-timeout`; a retry that could not start before the
 * deadline is not made. Aborting the call's `signal` during a backoff wait
 * rejects at once with an `AbortError`. Client and bidi streams pass through.
 * @example
 * const client = createClientFactory()
 *   .use(retryMiddleware({ budget: createRetryBudget({}) }))
 *   .create(EchoDefinition, channel);
 */
export function retryMiddleware(
  options: RetryMiddlewareOptions = {},
): ClientMiddleware<RetryCallOptions> {
  const defaultAttempts = checkAttempts('retryAttempts', options.retryAttempts, 3);
  const isIdempotent = idempotencyRule('idempotent', options.idempotent);
  const serverStreaming = options.serverStreaming ?? true;
  const defaultRetry = options.retry;
  const defaultOnRetry = options.onRetry;
  const settings: RetrySettings = {
    backoff: resolveBackoff(options.backoff),
    budget: options.budget,
    classify: options.classify ?? createGrpcStatusClassifier(),
    perAttemptTimeoutMs:
      options.perAttemptTimeout === undefined
        ? undefined
        : parseDuration('perAttemptTimeout', options.perAttemptTimeout),
    clock: options.clock ?? systemClock,
    sleep: options.sleep ?? systemSleep,
  };
  return async function* retryMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): MiddlewareResult<Response> {
    const { retry, retryAttempts, onRetry, ...rest } = callOptions;
    const attempts =
      retryAttempts === undefined
        ? defaultAttempts
        : checkAttempts('retryAttempts', retryAttempts, defaultAttempts);
    if (
      attempts < 2 ||
      call.requestStream ||
      (call.responseStream && !serverStreaming) ||
      !(retry ?? defaultRetry ?? isIdempotent(call.method))
    ) {
      return yield* call.next(call.request, rest);
    }
    settings.budget?.recordRequest();
    const chain = new RetryChain(
      settings,
      call.method.path,
      rest,
      attempts,
      onRetry ?? defaultOnRetry,
    );
    if (!call.responseStream) return await chain.unary(unaryNext(call), call.request);
    yield* chain.stream(streamNext(call), call.request);
  };
}
