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
  createGrpcStatusClassifier,
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  type MethodSelector,
} from '@breakwater/core/grpc';
import type { CallOptions, ClientMiddleware, ClientMiddlewareCall } from 'nice-grpc-common';
import { idempotencyRule } from './idempotency.js';
import { HedgedCall, type HedgeSettings } from './internals/hedged-call.js';
import { type MiddlewareResult, unaryNext } from './internals/next.js';
import type { RetryCallOptions } from './retry-middleware.js';

/** Per-call options of {@link hedgingMiddleware} (also accepted as its defaults). */
export interface HedgingCallOptions {
  /** Hedge this call (`true` also for a method not marked idempotent) or never (`false`). Defaults to whether the method is idempotent. */
  hedge?: boolean;
}

/** Options of {@link hedgingMiddleware}. */
export interface HedgingMiddlewareOptions extends HedgingCallOptions {
  /** Start another attempt when none has answered within this delay. Required. */
  delay: Duration;
  /** Attempts in flight at most, the first included (integer >= 1). Defaults to 2. */
  attempts?: number;
  /** Methods safe to send more than once besides those their definition marks idempotent. Defaults to none. */
  idempotent?: MethodSelector;
  /** Shared retry budget; each hedge withdraws from it. Defaults to none. */
  budget?: RetryBudget;
  /** Status → verdict; a non-retryable status ends the call at once. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Called before each hedge (method, attempt number, delay; `code` set when a failure started it). Defaults to none. */
  onHedge?: (event: GrpcRetryEvent) => void;
  /** Time source for deadlines. Defaults to `systemClock`. */
  clock?: Clock;
  /** How the hedging delay is waited. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** Keys of {@link HedgingMiddlewareOptions}. @internal */
export const HEDGING_KEYS = {
  delay: true,
  attempts: true,
  idempotent: true,
  budget: true,
  classify: true,
  onHedge: true,
  clock: true,
  sleep: true,
  hedge: true,
} as const satisfies KnownKeys<HedgingMiddlewareOptions>;

/**
 * Hedges unary calls of idempotent methods: when no attempt has answered
 * within `delay`, another starts (up to `attempts` in all, each drawing on
 * the retry budget); the first answer wins and the others are cancelled. A
 * retryable failure starts the next attempt at once (after the server's
 * pushback, if any); a non-retryable one ends the call. A hedged call is
 * passed down with `retry: false`, so a retry middleware below does not
 * multiply its attempts. Streaming calls pass through.
 */
export function hedgingMiddleware(
  options: HedgingMiddlewareOptions,
): ClientMiddleware<HedgingCallOptions> {
  const [settings, isIdempotent] = optionPath(
    '',
    () => {
      checkOptions(undefined, options, HEDGING_KEYS, '', false);
      const s: HedgeSettings = {
        delayMs: parseDuration('delay', options.delay),
        maxAttempts: checkAttempts('attempts', options.attempts, 2),
        budget: options.budget,
        classify: options.classify ?? createGrpcStatusClassifier(),
        onHedge: options.onHedge,
        clock: options.clock ?? systemClock,
        sleep: options.sleep ?? systemSleep,
      };
      return [s, idempotencyRule('idempotent', options.idempotent)] as const;
    },
    'hedgingMiddleware',
  );
  const defaultHedge = options.hedge;
  return async function* hedgingMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions & HedgingCallOptions,
  ): MiddlewareResult<Response> {
    const { hedge, ...rest } = callOptions;
    if (
      settings.maxAttempts < 2 ||
      call.requestStream ||
      call.responseStream ||
      !(hedge ?? defaultHedge ?? isIdempotent(call.method))
    ) {
      return yield* call.next(call.request, rest);
    }
    settings.budget?.recordRequest();
    // Not a spread: see the deadline middleware.
    const down: CallOptions & RetryCallOptions = Object.assign(rest, { retry: false });
    return await new HedgedCall(
      settings,
      call.method.path,
      down,
      unaryNext(call),
      call.request,
    ).run();
  };
}
