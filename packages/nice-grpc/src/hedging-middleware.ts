import type { RetryBudget, RetryBudgetOptions } from '@breakwater/core';
import type { HedgePolicyOptions } from '@breakwater/core/adapter';
import type { GrpcStatusClassifier, MethodSelector } from '@breakwater/core/grpc';
import { checkOptions, keysOf } from '@breakwater/core/internal';
import type { Clock, Sleep } from '@breakwater/core/time';
import type { ClientMiddleware } from 'nice-grpc-common';
import { attemptStage, compact, resolvePart } from './internals/parts.js';
import { attemptsMiddleware, type RetryCallOptions } from './retry-middleware.js';

/** Options of {@link hedgingMiddleware}: the `hedge` part of the vocabulary with the keys it uses. */
export interface HedgingMiddlewareOptions {
  /** Start another attempt when the latest has been outstanding this long, in ms (>= 0). Required. */
  delayMs: number;
  /** Attempts per call, the first included (an integer in [2, 10]). Defaults to 2. */
  attempts?: number;
  /** A retry budget, or `createRetryBudget` options; each hedge withdraws from it. Defaults to none. */
  budget?: RetryBudget | RetryBudgetOptions;
  /** Methods safe to send more than once besides those their definition marks idempotent. Defaults to none. */
  idempotent?: MethodSelector;
  /** Status → verdict; a non-retryable status ends the call at once. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** How the hedging delay is waited. Defaults to the host timer. */
  sleep?: Sleep;
}

const HEDGING_KEYS = keysOf<HedgingMiddlewareOptions>()([
  'delayMs',
  'attempts',
  'budget',
  'idempotent',
  'classify',
  'clock',
  'sleep',
]);

/**
 * Hedges unary calls of idempotent methods by the rules of core's attempt
 * engine: when no attempt has answered within `delayMs`, another starts (up
 * to `attempts` in all, each drawing on the budget); the first answer wins
 * and the others are cancelled. A retryable failure starts the next attempt
 * at once (after the server's pushback, if any); a non-retryable one ends
 * the call. Other calls pass through.
 * @example
 * createClientFactory().use(hedgingMiddleware({ delayMs: 50, idempotent: ['shop.Catalog'] }))
 */
export function hedgingMiddleware(
  options: HedgingMiddlewareOptions,
): ClientMiddleware<RetryCallOptions> {
  const fn = 'hedgingMiddleware';
  checkOptions(fn, options, HEDGING_KEYS, '', false);
  const { delayMs, attempts, idempotent, classify, ...rest } = options;
  const hedge = compact<HedgePolicyOptions>({ delayMs, attempts });
  const plan = resolvePart(fn, 'hedge', Object.assign({}, rest, { hedge }));
  return attemptsMiddleware(attemptStage(fn, plan, Object.assign({ idempotent, classify }, rest)));
}
