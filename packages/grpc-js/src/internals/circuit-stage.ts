import { isProbePermit } from '@breakwater/core/breaker';
import type { GrpcCircuits, GrpcMethodCircuit } from '@breakwater/core/grpc';
import { status as Status, type StatusObject } from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { markProbe } from './probe.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { statusWithCause } from './status.js';

/**
 * The `circuit` stage: guards calls with the core circuit breaker of their
 * method. A refused call never opens a stream: it ends with `UNAVAILABLE`
 * whose `ServiceError.cause` is the `CircuitOpenError`. A call counts once,
 * after its retries (this stage sits outside them), and a half-open probe gets
 * no retries or hedges (its options are marked for the attempt stage); caller cancellation and
 * statuses the classifier does not count are neutral.
 * @internal
 */
export function circuitStage(circuits: GrpcCircuits): Stage {
  const { clock } = circuits;
  const observer: CallObserver<GrpcMethodCircuit> = {
    settle({ breaker, path }, permit, startedAt, status: StatusObject, cancelledByCaller) {
      // Success first: reading trailers would cost a closure on every call.
      const outcome =
        status.code === Status.OK
          ? 'success'
          : circuits.outcomeOf(
              path,
              status.code,
              status.details,
              trailerGetter(status.metadata),
              cancelledByCaller,
              isProbePermit(permit),
            );
      breaker.release(permit, { outcome, durationMs: clock() - startedAt });
    },
  };
  return {
    intercept(callOptions, chain, index, final) {
      const method = circuits.methodCircuit(callOptions.method_definition.path);
      const permit = method.breaker.tryAcquire();
      if (permit < 0) {
        const error = circuits.openError(method);
        return new RefusedCall(statusWithCause(Status.UNAVAILABLE, error.message, error));
      }
      // A probe is never retried below: one attempt, whose failure re-opens the circuit.
      const below = isProbePermit(permit) ? markProbe(callOptions) : callOptions;
      return new ObservedCall(chain.next(below, index, final), observer, method, permit, clock());
    },
  };
}
