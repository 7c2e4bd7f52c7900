import type { LimitOutcome } from '../limit/adaptive-limiter.js';
import { GrpcStatus } from './status.js';

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
