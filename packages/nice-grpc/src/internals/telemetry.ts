import { isDeadlineExceededError } from '@breakwater/core';
import { type GrpcCircuits, grpcStatusName } from '@breakwater/core/grpc';
import {
  errorTypeOf,
  grpcTelemetryTargets,
  refusalOf,
  type SafeTelemetry,
  TELEMETRY_SCOPE,
  TelemetryScope,
} from '@breakwater/core/internal';
import {
  type CallOptions,
  ClientError,
  type ClientMiddleware,
  type ClientMiddlewareCall,
} from 'nice-grpc-common';
import { isAbortError } from './errors.js';
import type { MiddlewareResult } from './next.js';

/** The bounded name of a call's or attempt's error: its gRPC status name, else the error's name. @internal */
export function telemetryErrorType(error: unknown): string {
  if (error instanceof ClientError) return grpcStatusName(error.code);
  return isDeadlineExceededError(error) ? 'DEADLINE_EXCEEDED' : errorTypeOf(error);
}

/**
 * The outermost stage when `telemetry` is on: starts each call's telemetry
 * (`rpc.system`, `rpc.service`, `rpc.method`, built once per method), hands it
 * to the attempt stage in the call's options, and reports the refusal or the
 * end. Without the option the stage is not in the stack.
 * @internal
 */
export function telemetryStage(
  telemetry: SafeTelemetry,
  circuits: GrpcCircuits | undefined,
): ClientMiddleware {
  const targetOf = grpcTelemetryTargets(telemetry, circuits);
  return async function* telemetered<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    options: CallOptions,
  ): MiddlewareResult<Response> {
    const tel = telemetry.startCall(targetOf(call.method.path), telemetry.clock());
    if (tel === undefined) return yield* call.next(call.request, options);
    const scope = new TelemetryScope(tel, telemetry.clock);
    try {
      const result = yield* call.next(
        call.request,
        Object.assign({}, options, { [TELEMETRY_SCOPE]: scope }),
      );
      // A call the attempt stage passed through (a client stream) is its own single attempt.
      const now = telemetry.clock();
      if (scope.driven) tel.end('success', scope.attempts, undefined, now);
      else tel.firstAttemptSucceeded(now);
      return result;
    } catch (error) {
      const refusal =
        scope.refusal ??
        (scope.driven ? undefined : refusalOf((error as { cause?: unknown } | null)?.cause));
      const now = telemetry.clock();
      if (refusal !== undefined) {
        tel.refused(refusal);
        tel.end('refused', 0, undefined, now);
      } else {
        const type = telemetryErrorType(error);
        if (!scope.driven) tel.attemptEnd(1, 'failure', type, now);
        if (type === 'DEADLINE_EXCEEDED') tel.deadlineExceeded('call');
        const outcome = isAbortError(error) ? 'cancelled' : 'failure';
        tel.end(outcome, scope.driven ? scope.attempts : 1, type, now);
      }
      throw error;
    }
  };
}
