// @breakwater/core/adapter — for adapter authors: the engine's constants, the
// policy parts of `ResilienceOptions`, the event variants and telemetry detail,
// propagation settings and the adaptive-concurrency tuning an adapter passes on.

export {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_PUSHBACK_MS,
  MAX_ATTEMPTS,
} from './attempts/engine.js';
export type {
  ResilienceCircuitEvent,
  ResilienceEventSource,
  ResilienceFailoverEvent,
  ResilienceHedgeEvent,
  ResilienceRefusalEvent,
  ResilienceRetryEvent,
} from './attempts/resilience-events.js';
export type {
  ConcurrencyOptions,
  HedgePolicyOptions,
  RetryEvent,
  RetryPolicyOptions,
} from './attempts/resilience-options.js';
export type {
  TelemetryAttemptOutcome,
  TelemetryCallOutcome,
  TelemetryRefusal,
} from './attempts/telemetry.js';
export type { Disposable, Subscribe } from './internal/events.js';
export { CRITICALITIES } from './limit/criticality.js';
export {
  type AdaptiveConcurrencyOptions,
  type CriticalityShares,
  DEFAULT_ADAPTIVE_CONCURRENCY,
} from './limit/gradient-limit.js';
export {
  DEFAULT_PROPAGATE_MARGIN_MS,
  type PropagateOptions,
} from './propagation/propagate-options.js';
export type { RouteProtection } from './routing/protection.js';
