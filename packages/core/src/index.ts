// @breakwater/core — user-facing factories first, types and extension points below.

// The one attempt engine and the one options object every adapter stack is built from.
export {
  AttemptEngine,
  DEFAULT_BACKOFF,
  MAX_ATTEMPTS,
  type RetryBudgetLike,
  STOP_ATTEMPTS,
  STOP_BUDGET,
  STOP_DEADLINE,
  STOP_NOT_RETRYABLE,
  STOP_PUSHBACK,
  type StopReason,
  stopReason,
} from './attempts/engine.js';
export {
  type ConcurrencyOptions,
  type HedgePolicyOptions,
  RESILIENCE_KEYS,
  type ResilienceOptions,
  type ResiliencePlan,
  type RetryEvent,
  type RetryPolicyOptions,
  resolveResilience,
  STANDARD_RESILIENCE,
} from './attempts/resilience-options.js';
export { type RetryLoopHooks, retryAfterFailure } from './attempts/retry-loop.js';

export * from './breaker/index.js';
export * from './cache/index.js';
export * from './deadline/index.js';
export * from './errors/index.js';
export * from './health/index.js';
export { type Duration, parseDuration } from './internal/duration.js';
export type { Disposable, Event } from './internal/events.js';
// Option checking shared with the adapters (not part of the supported API).
export {
  checkKeys,
  checkNumber,
  checkObject,
  checkOptions,
  type KnownKeys,
  optionPath,
  optionRangeError,
  optionTypeError,
} from './internal/validate.js';
export * from './limit/index.js';
export * from './pool/index.js';
export * from './protect/index.js';
export { type Err, err, isErr, isOk, type Ok, ok, type Result } from './result/result.js';
export * from './retry/index.js';
export * from './routing/index.js';
export * from './time/index.js';
