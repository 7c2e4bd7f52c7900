import type { ResiliencePlan } from '../attempts/resilience-options.js';
import type { LimitOutcome } from '../limit/adaptive-limiter.js';
import { type AdaptiveLimiters, createAdaptiveLimiters } from '../limit/limiters.js';
import type { Clock } from '../time/clock.js';
import { GrpcStatus } from './status.js';
import { grpcTelemetryTargets } from './telemetry.js';

/**
 * The adaptive limits of a gRPC adapter's `concurrency.adaptive`, one per
 * method path (each handed to the telemetry with its `rpc.service` and
 * `rpc.method`), or `undefined` when the option is off. `clock` is the
 * stack's injected clock, if any.
 * @internal
 */
export function grpcAdaptiveLimiters(
  plan: ResiliencePlan,
  clock: Clock | undefined,
): AdaptiveLimiters | undefined {
  const { adaptive, telemetry } = plan;
  if (adaptive === undefined) return undefined;
  const targetOf = telemetry === undefined ? undefined : grpcTelemetryTargets(telemetry, undefined);
  return createAdaptiveLimiters(adaptive, clock, telemetry, (path) =>
    targetOf === undefined ? {} : targetOf(path),
  );
}

/**
 * What a gRPC call's final status tells its adaptive concurrency limit:
 * `DEADLINE_EXCEEDED` and `RESOURCE_EXHAUSTED` (the server is overloaded) are
 * drops; `CANCELLED` (or any status after the caller cancelled) and
 * `UNAVAILABLE` (no connection: a fast failure that says nothing of the
 * server's latency) tell nothing; every other status is an answer, whose
 * latency is a sample.
 * @internal
 */
export function grpcLimitOutcome(code: number, cancelledByCaller: boolean): LimitOutcome {
  if (cancelledByCaller || code === GrpcStatus.CANCELLED || code === GrpcStatus.UNAVAILABLE) {
    return 'ignored';
  }
  if (code === GrpcStatus.DEADLINE_EXCEEDED || code === GrpcStatus.RESOURCE_EXHAUSTED) {
    return 'dropped';
  }
  return 'answered';
}
