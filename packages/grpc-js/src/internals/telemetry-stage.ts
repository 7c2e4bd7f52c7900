import { type GrpcCircuits, grpcStatusName } from '@breakwater/core/grpc';
import {
  grpcTelemetryTargets,
  refusalOf,
  type SafeTelemetry,
  TELEMETRY_SCOPE,
  TelemetryScope,
} from '@breakwater/core/internal';
import { status as Status, type StatusObject } from '@grpc/grpc-js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { breakwaterCause } from './status.js';

const observer: CallObserver<TelemetryScope> = {
  settle(scope, _permit, _startedAt, status: StatusObject, cancelledByCaller) {
    const { tel } = scope;
    const now = scope.clock();
    const refusal = scope.refusal ?? refusalOf(breakwaterCause(status));
    if (refusal !== undefined) {
      tel.refused(refusal);
      tel.end('refused', 0, undefined, now);
      return;
    }
    const ok = status.code === Status.OK;
    if (ok && !scope.driven) {
      // Its own single attempt succeeded: that attempt's end and the call's, in one hook.
      tel.firstAttemptSucceeded(now);
      return;
    }
    const type = ok ? undefined : grpcStatusName(status.code);
    if (!scope.driven) tel.attemptEnd(1, ok ? 'success' : 'failure', type, now);
    if (status.code === Status.DEADLINE_EXCEEDED) tel.deadlineExceeded('call');
    tel.end(
      ok ? 'success' : cancelledByCaller ? 'cancelled' : 'failure',
      scope.driven ? scope.attempts : 1,
      type,
      now,
    );
  },
};

/**
 * The outermost stage when `telemetry` is on: starts each call's telemetry
 * (`rpc.system`, `rpc.service`, `rpc.method`, built once per method), hands it
 * to the attempt stage in the call's options, and reports the refusal or the
 * end with the final status. Without the option the stage is not in the stack.
 * @internal
 */
export function telemetryStage(
  telemetry: SafeTelemetry,
  circuits: GrpcCircuits | undefined,
): Stage {
  const targetOf = grpcTelemetryTargets(telemetry, circuits);
  return {
    intercept(options, chain, index, final) {
      const now = telemetry.clock();
      const tel = telemetry.startCall(targetOf(options.method_definition.path), now);
      if (tel === undefined) return chain.next(options, index, final);
      const scope = new TelemetryScope(tel, telemetry.clock);
      // Not a spread: see the deadline stage.
      const inner = chain.next(
        Object.assign({}, options, { [TELEMETRY_SCOPE]: scope }),
        index,
        final,
      );
      // A call refused at once (circuit, rate limit) never started an attempt; one that runs as
      // its own attempt started it with the call, which startCall told already when the telemetry
      // takes attempt 1 to start with the call.
      if (!(scope.driven || telemetry.firstAttemptAtStart || inner instanceof RefusedCall)) {
        tel.attemptStart(1, now);
      }
      return new ObservedCall(inner, observer, scope, -1, 0);
    },
  };
}
