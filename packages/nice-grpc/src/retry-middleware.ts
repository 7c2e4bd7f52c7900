import type {
  Backoff,
  BackoffOptions,
  ResilienceWarning,
  RetryBudget,
  RetryBudgetOptions,
} from '@breakwater/core';
import type { RetryPolicyOptions } from '@breakwater/core/adapter';
import type { GrpcRetryEvent, GrpcStatusClassifier, MethodSelector } from '@breakwater/core/grpc';
import { checkOptions, keysOf } from '@breakwater/core/internal';
import type { Clock, Sleep } from '@breakwater/core/time';
import type { ClientMiddleware } from 'nice-grpc-common';
import { attemptsStep, attemptsStream } from './internals/attempts-stage.js';
import { stepMiddleware } from './internals/next.js';
import { type AttemptStage, attemptStage, compact, resolvePart } from './internals/parts.js';

/** Per-call options of the retry and hedging middlewares (and `resilienceMiddleware`). */
export interface RetryCallOptions {
  /** `false`: never retry this call; `true`: retry it although its method is not known idempotent. Defaults to the method's idempotency. */
  retry?: boolean;
  /** `false`: never hedge this call; `true`: hedge it although its method is not known idempotent. Defaults to the method's idempotency. */
  hedge?: boolean;
  /** Attempts for this call, the first included (an integer in [1, 10]). Defaults to the middleware's `attempts`. */
  attempts?: number;
}

/** Options of {@link retryMiddleware}: the `retry` part of the vocabulary with the keys it uses. */
export interface RetryMiddlewareOptions {
  /** Attempts per call, the first included (an integer in [1, 10]). Defaults to 3. */
  attempts?: number;
  /** Delay between attempts: a core `Backoff` or `createBackoff` options. Defaults to exponential from 100 ms, ×2, capped at 5 s, full jitter. */
  backoff?: Backoff | BackoffOptions;
  /** Longest server pushback honoured, in ms; a longer one ends the retries. Defaults to 30 000. */
  maxPushbackMs?: number;
  /** Told before each retry's wait: the method, the attempt that failed, the delay and the status code; a throwing listener is ignored. Defaults to none. */
  onRetry?: (event: GrpcRetryEvent) => void;
  /** A retry budget, or `createRetryBudget` options; a refused retry ends the call with its last error. Defaults to none. */
  budget?: RetryBudget | RetryBudgetOptions;
  /** Deadline of each unary attempt in ms (never later than the call's); a server `DEADLINE_EXCEEDED` under it is retried. Defaults to none. */
  attemptTimeoutMs?: number;
  /** Methods safe to repeat besides those their definition marks `IDEMPOTENT`/`NO_SIDE_EFFECTS`. Defaults to none. */
  idempotent?: MethodSelector;
  /** Status → verdict. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Told once, at the first retried call of a method not known idempotent; a throwing listener is ignored. Defaults to a Node process warning, printed once per process. */
  onWarning?: (warning: ResilienceWarning) => void;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How backoff and attempt deadlines wait. Defaults to the host timer. */
  sleep?: Sleep;
}

const RETRY_KEYS = keysOf<RetryMiddlewareOptions>()([
  'attempts',
  'backoff',
  'maxPushbackMs',
  'onRetry',
  'budget',
  'attemptTimeoutMs',
  'idempotent',
  'classify',
  'onWarning',
  'clock',
  'sleep',
]);

/**
 * Retries failed unary and server-streaming calls (server streams only
 * until their first message) by the rules of core's attempt engine: methods
 * marked or listed idempotent, plus any call that provably never reached
 * the server. Client and bidi streams pass through.
 * @example
 * createClientFactory().use(retryMiddleware({ attempts: 3, budget: { ratio: 0.2 } }))
 */
export function retryMiddleware(
  options: RetryMiddlewareOptions = {},
): ClientMiddleware<RetryCallOptions> {
  const fn = 'retryMiddleware';
  checkOptions(fn, options, RETRY_KEYS);
  const { attempts, backoff, maxPushbackMs, onRetry, idempotent, classify, onWarning, ...rest } =
    options;
  const retry = compact<RetryPolicyOptions>({
    attempts,
    backoff,
    maxPushbackMs,
    onRetry: undefined,
  });
  const plan = resolvePart(fn, 'retry', Object.assign({}, rest, { retry }));
  return attemptsMiddleware(
    attemptStage(fn, plan, { idempotent, classify, onWarning, onRetry, ...rest, retryAsked: true }),
  );
}

/** The retry/hedge stage as a middleware (of `retryMiddleware` and `hedgingMiddleware`). @internal */
export function attemptsMiddleware(stage: AttemptStage): ClientMiddleware<RetryCallOptions> {
  return stepMiddleware(attemptsStep(stage), attemptsStream(stage));
}
