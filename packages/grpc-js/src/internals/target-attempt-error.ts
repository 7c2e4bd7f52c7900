import type { ErrorVerdict } from '@breakwater/core';
import { grpcStatusName } from '@breakwater/core/grpc';
import type { Metadata, StatusObject } from '@grpc/grpc-js';

/**
 * One attempt of a routed call on one target ended with a non-OK status
 * before the call committed to a response. The router judges it by its
 * `verdict`; a `RoutingError` lists these in `errors` (one per failed target).
 * @internal
 */
export class TargetAttemptError extends Error {
  /**
   * The status name (`'UNAVAILABLE'`): the router's telemetry reports an error by its name
   * (`error.type` of a failover or failed attempt), which for gRPC is the status name.
   */
  override readonly name: string;
  /** gRPC status code of the attempt. */
  readonly code: number;
  /** Status details of the attempt. */
  readonly details: string;
  /** Trailers of the attempt. */
  readonly metadata: Metadata;

  constructor(
    /** The attempt's final status, as grpc-js reported it. */
    readonly status: StatusObject,
    /** Id of the target the attempt ran on. */
    readonly target: string,
    /** How the router treats it (retry on the same target, fail over, count for health). */
    readonly verdict: ErrorVerdict,
  ) {
    super(`${target}: ${status.details || `status ${status.code}`}`);
    this.name = grpcStatusName(status.code);
    this.code = status.code;
    this.details = status.details;
    this.metadata = status.metadata;
  }
}
