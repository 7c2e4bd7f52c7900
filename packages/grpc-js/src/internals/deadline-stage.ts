import { DeadlineExceededError } from '@breakwater/core';
import { telemetryScopeOf } from '@breakwater/core/internal';
import type { Clock } from '@breakwater/core/time';
import { type InterceptorOptions, type NextCall, status as Status } from '@grpc/grpc-js';
import { DeadlineCall } from './deadline-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage, StageChain } from './stage.js';
import { statusWithCause } from './status.js';
import type { CallLink } from './types.js';

/**
 * Continues a call under a deadline `timeoutMs` from now; a deadline the
 * caller set that is earlier wins, so a call never gets more time than its
 * caller allowed. grpc-js sends it to the server as `grpc-timeout`; when it
 * runs out the call fails `DEADLINE_EXCEEDED` with the core
 * `DeadlineExceededError` as `cause` (see `breakwaterCause`).
 * @internal
 */
export function withDeadline(
  callOptions: InterceptorOptions,
  timeoutMs: number,
  clock: Clock,
  chain: StageChain,
  index: number,
  final: NextCall,
): CallLink {
  const now = clock();
  const at = now + timeoutMs;
  const caller = callOptions.deadline;
  const callerMs =
    caller === undefined
      ? Number.POSITIVE_INFINITY
      : caller instanceof Date
        ? caller.getTime()
        : caller;
  if (callerMs <= now) {
    // The caller's deadline passed before the call started: it never opens a stream, and
    // telemetry counts a refusal, not a deadline that ran out during the call.
    const scope = telemetryScopeOf(callOptions);
    if (scope !== undefined) scope.refusal = 'deadline-expired';
    const cause = new DeadlineExceededError(0);
    return new RefusedCall(statusWithCause(Status.DEADLINE_EXCEEDED, cause.message, cause));
  }
  if (callerMs <= at) {
    return new DeadlineCall(chain.next(callOptions, index, final), callerMs - now);
  }
  // Object.assign, not `{ ...callOptions, deadline }`: Node 20's V8 takes a slow path
  // (about 1 µs per key) to add a key the spread source lacks to a spread copy.
  const down = Object.assign({}, callOptions, { deadline: at });
  return new DeadlineCall(chain.next(down, index, final), timeoutMs);
}

/** The `timeoutMs` stage: every call gets a deadline of the whole call. @internal */
export function deadlineStage(timeoutMs: number, clock: Clock): Stage {
  return {
    intercept: (callOptions, chain, index, final) =>
      withDeadline(callOptions, timeoutMs, clock, chain, index, final),
  };
}
