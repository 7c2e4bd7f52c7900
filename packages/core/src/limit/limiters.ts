import type { SafeTelemetry, TelemetryTarget } from '../attempts/telemetry.js';
import { type Clock, monotonicClock } from '../time/clock.js';
import { type AdaptiveLimiter, adaptiveLimiterOf } from './adaptive-limiter.js';
import type { GradientSettings } from './gradient-limit.js';

/**
 * One adaptive limiter per target (a method path, a procedure, a provider),
 * created on first use: each target's latency is its own. Each new limiter is
 * handed to the telemetry with `targetOf(key)`.
 * @internal
 */
export interface AdaptiveLimiters {
  limiterFor(key: string): AdaptiveLimiter;
}

/**
 * The limiters of `concurrency.adaptive` for a stack. `clock` is the stack's
 * injected clock, if any: latency samples need sub-millisecond resolution,
 * so without one they read `monotonicClock`.
 * @internal
 */
export function createAdaptiveLimiters(
  settings: GradientSettings,
  clock: Clock | undefined,
  telemetry: SafeTelemetry | undefined,
  targetOf: (key: string) => TelemetryTarget,
): AdaptiveLimiters {
  const limiters = new Map<string, AdaptiveLimiter>();
  const samples = clock ?? monotonicClock;
  return {
    limiterFor(key) {
      let limiter = limiters.get(key);
      if (limiter === undefined) {
        limiter = adaptiveLimiterOf(settings, samples);
        limiters.set(key, limiter);
        telemetry?.concurrencyLimit(limiter, targetOf(key));
      }
      return limiter;
    },
  };
}
