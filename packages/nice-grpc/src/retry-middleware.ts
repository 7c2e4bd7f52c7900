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
  createGrpcStatusClassifier,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
  resolveBackoff,
} from '@breakwater/core/grpc';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import { idempotencyRule } from './idempotency.js';
import { type DeadlineOption, deadlineAt, withTimeoutHeader } from './internals/deadline.js';
import { type MiddlewareResult, streamNext, unaryNext, unaryResult } from './internals/next.js';
import { RetryChain, type RetrySettings } from './internals/retry-chain.js';
import { runAlone, type UnaryStage } from './internals/unary-stage.js';

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
  /** Status → verdict (the one `@breakwater/grpc-js` uses too). Defaults to `createGrpcStatusClassifier()`. */
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

/** Keys of {@link RetryMiddlewareOptions}. @internal */
export const RETRY_KEYS = {
  idempotent: true,
  backoff: true,
  budget: true,
  classify: true,
  perAttemptTimeout: true,
  serverStreaming: true,
  clock: true,
  sleep: true,
  retry: true,
  retryAttempts: true,
  onRetry: true,
} as const satisfies KnownKeys<RetryMiddlewareOptions>;

/**
 * Retries failed unary and server-streaming calls of idempotent methods
 * (server streams only until their first message), with the gRPC status
 * classifier of `@breakwater/core/grpc` (the grpc-js adapter uses it too): `UNAVAILABLE` by default,
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
  return retryMiddlewareOf(optionPath('', () => retryStage(options, false), 'retryMiddleware'));
}

/** {@link retryMiddleware} around its stage (shared with `resilienceMiddleware`). @internal */
export function retryMiddlewareOf(stage: RetryStage): ClientMiddleware<RetryCallOptions> {
  return async function* retryMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & RetryCallOptions,
  ): MiddlewareResult<Response> {
    if (!call.responseStream) {
      return await runAlone(stage, call, callOptions);
    }
    const { retry, retryAttempts, onRetry, ...rest } = callOptions;
    const attempts = stage.attemptsFor(call, retry, retryAttempts);
    if (attempts < 2) return yield* call.next(call.request, rest);
    yield* stage
      .chain(call.method.path, rest, attempts, onRetry)
      .stream(streamNext(call), call.request);
  };
}

/** The unary part of {@link retryMiddleware}, with what its stream path shares. @internal */
export interface RetryStage extends UnaryStage {
  /** Attempts for this call; below 2 it is not retried. */
  attemptsFor(
    call: Pick<
      ClientMiddlewareCall<unknown, unknown>,
      'method' | 'requestStream' | 'responseStream'
    >,
    retry: boolean | undefined,
    retryAttempts: number | undefined,
  ): number;
  /** The attempts of one retried call (its request counted by the budget). */
  chain(
    path: string,
    options: CallOptions,
    attempts: number,
    onRetry: RetryCallOptions['onRetry'],
  ): RetryChain;
}

/**
 * The unary stage of {@link retryMiddleware}; it runs the call's own `next`,
 * so it is the last stage. With `stampPassThrough` a call it does not retry
 * still goes out with the time left as `grpc-timeout` (the deadline stage
 * above leaves the header to it: retried attempts write it anyway).
 * @internal
 */
export function retryStage(options: RetryMiddlewareOptions, stampPassThrough: boolean): RetryStage {
  checkOptions(undefined, options, RETRY_KEYS, '', false);
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
  const attemptsFor: RetryStage['attemptsFor'] = (call, retry, retryAttempts) => {
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
      return 1;
    }
    return attempts;
  };
  const chain: RetryStage['chain'] = (path, rest, attempts, onRetry) => {
    settings.budget?.recordRequest();
    return new RetryChain(settings, path, rest, attempts, onRetry ?? defaultOnRetry);
  };
  return {
    attemptsFor,
    chain,
    unary(call, callOptions) {
      const { retry, retryAttempts, onRetry } = callOptions as CallOptions & RetryCallOptions;
      const rest = withoutRetryKeys(callOptions);
      let attempts: number;
      try {
        attempts = attemptsFor(call, retry, retryAttempts);
      } catch (error) {
        return Promise.reject(error);
      }
      if (attempts >= 2) {
        return chain(call.method.path, rest, attempts, onRetry).unary(
          unaryNext(call),
          call.request,
        );
      }
      const deadline = (rest as DeadlineOption).deadline;
      const down =
        stampPassThrough && deadline !== undefined
          ? Object.assign({}, rest, {
              metadata: withTimeoutHeader(
                rest.metadata,
                deadlineAt(deadline, settings.clock) - settings.clock(),
              ),
            })
          : rest;
      return unaryResult(unaryNext(call)(call.request, down));
    },
  };
}

/**
 * The call options without this middleware's keys. Most calls carry none of
 * them: those pass on as they are, without an object-rest copy.
 */
function withoutRetryKeys(options: CallOptions & RetryCallOptions): CallOptions {
  if (!('retry' in options || 'retryAttempts' in options || 'onRetry' in options)) return options;
  const { retry: _retry, retryAttempts: _attempts, onRetry: _onRetry, ...rest } = options;
  return rest;
}
