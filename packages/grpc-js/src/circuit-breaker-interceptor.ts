import { type CircuitBreaker, optionPath } from '@breakwater/core';
import {
  createGrpcCircuits,
  type GrpcCircuitOptions,
  type GrpcMethodCircuit,
} from '@breakwater/core/grpc';
import { type Interceptor, status as Status, type StatusObject } from '@grpc/grpc-js';
import { type CallObserver, ObservedCall } from './internals/observed-call.js';
import { RefusedCall } from './internals/refused-call.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { statusWithCause } from './internals/status.js';
import { trailerGetter } from './trailer-getter.js';

/** Options of {@link circuitBreakerInterceptor} (shared with the nice-grpc circuit middleware). */
export type CircuitBreakerInterceptorOptions = GrpcCircuitOptions;

/** A circuit-breaker interceptor that can also show its circuits. */
export interface CircuitBreakerInterceptor extends Interceptor {
  /** The circuit guarding `path` (created on first use). */
  circuitFor(path: string): CircuitBreaker;
}

/**
 * Guards calls with the core circuit breaker, one circuit per method (or
 * service, or client). A refused call never opens a stream: it ends with
 * `UNAVAILABLE` whose `ServiceError.cause` is the `CircuitOpenError`. Every
 * call type is guarded; a call counts once, after retries when this
 * interceptor sits outside the retry interceptor. Caller cancellation and
 * statuses the classifier does not count are neutral.
 */
export function circuitBreakerInterceptor(
  options: CircuitBreakerInterceptorOptions = {},
): CircuitBreakerInterceptor {
  const stage = optionPath('', () => circuitBreakerStage(options), 'circuitBreakerInterceptor');
  return Object.assign(stageInterceptor([stage]), { circuitFor: stage.circuitFor });
}

/** The stage of {@link circuitBreakerInterceptor}, with its circuits. @internal */
export function circuitBreakerStage(
  options: CircuitBreakerInterceptorOptions,
): Stage & Pick<CircuitBreakerInterceptor, 'circuitFor'> {
  const circuits = createGrpcCircuits(options);
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
            );
      breaker.release(permit, outcome, clock() - startedAt);
    },
  };

  return {
    circuitFor: circuits.circuitFor,
    intercept(callOptions, chain, index, final) {
      const method = circuits.methodCircuit(callOptions.method_definition.path);
      const permit = method.breaker.tryAcquire();
      if (permit < 0) {
        const error = circuits.openError(method);
        return new RefusedCall(statusWithCause(Status.UNAVAILABLE, error.message, error));
      }
      return new ObservedCall(
        chain.next(callOptions, index, final),
        observer,
        method,
        permit,
        clock(),
      );
    },
  };
}
