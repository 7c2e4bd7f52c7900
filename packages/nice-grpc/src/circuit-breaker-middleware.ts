import {
  type CallOutcome,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  type Clock,
  optionPath,
} from '@breakwater/core';
import {
  createGrpcCircuits,
  type GrpcCircuitScope,
  type GrpcStatusClassifier,
} from '@breakwater/core/grpc';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { failureStatus, refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
import { resolvePart } from './internals/parts.js';

/**
 * The `circuit` part of the vocabulary for gRPC: core breaker options plus
 * `scope` (one circuit per `'method'`, per `'service'`, or one for the whole
 * `'client'`; defaults to `'method'`), or one `CircuitBreaker` for every method.
 */
export type GrpcCircuitPart =
  | CircuitBreaker
  | (CircuitBreakerOptions & { scope?: GrpcCircuitScope });

/** Options of {@link circuitBreakerMiddleware}: the circuit part, plus `classify` (defaults to `createGrpcStatusClassifier()`). */
export type CircuitBreakerMiddlewareOptions = GrpcCircuitPart & { classify?: GrpcStatusClassifier };

/** A circuit-breaker middleware that can also show its circuits. */
export type CircuitBreakerMiddleware = ClientMiddleware & {
  /** The circuit guarding `path` (created on first use). */
  circuitFor(path: string): CircuitBreaker;
};

function isBreaker(value: object): value is CircuitBreaker {
  return typeof (value as Partial<CircuitBreaker>).tryAcquire === 'function';
}

/**
 * Guards calls with the core circuit breaker, one circuit per method (or
 * service, or client). A refused call is never sent: it rejects with a
 * `ClientError` `UNAVAILABLE` whose `cause` is the `CircuitOpenError` (with
 * `retryAfterMs`). Every call type is guarded; a call counts once, after its
 * retries when this middleware is outside the retry stage. Statuses the
 * classifier does not count (`INVALID_ARGUMENT`, pushback, …) and caller
 * cancellation are neutral; a Breakwater deadline counts as
 * `DEADLINE_EXCEEDED` (a slow server).
 * @example
 * createClientFactory().use(circuitBreakerMiddleware({ failureThreshold: 5, openDurationMs: 10_000 }))
 */
export function circuitBreakerMiddleware(
  options: CircuitBreakerMiddlewareOptions = {},
): CircuitBreakerMiddleware {
  const fn = 'circuitBreakerMiddleware';
  const { classify, ...circuit } = options as CircuitBreakerOptions & {
    classify?: GrpcStatusClassifier;
  };
  return circuitStage(fn, '', isBreaker(options) ? options : circuit, classify);
}

/**
 * The circuit stage: `part` checked by core (errors under option path
 * `path` of factory `fn`), one breaker per scope key.
 * @internal
 */
export function circuitStage(
  fn: string,
  path: string,
  part: GrpcCircuitPart,
  classify: GrpcStatusClassifier | undefined,
): CircuitBreakerMiddleware {
  const shared = isBreaker(part) ? part : undefined;
  const { scope, ...breaker } = (shared === undefined ? part : {}) as CircuitBreakerOptions & {
    scope?: GrpcCircuitScope;
  };
  // Core checks the breaker options (and builds one breaker, thrown away: each key gets its own).
  resolvePart(fn, 'circuit', { circuit: shared ?? breaker }, path);
  const circuits = optionPath(
    path,
    () =>
      createGrpcCircuits({
        ...(scope === undefined ? {} : { scope }),
        ...(shared === undefined ? { breaker } : { breakerFor: () => shared }),
        ...(classify === undefined ? {} : { classify }),
        ...(breaker.clock === undefined ? {} : { clock: breaker.clock }),
      }),
    fn,
  );
  const clock: Clock = circuits.clock;
  async function* circuitBreakerMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const path = call.method.path;
    const method = circuits.methodCircuit(path);
    const permit = method.breaker.tryAcquire();
    if (permit < 0) throw refusal(path, Status.UNAVAILABLE, circuits.openError(method));
    const startedAt = clock();
    // A stream its consumer leaves early ends in `finally` with neither result: neutral.
    let outcome: CallOutcome = 'neutral';
    try {
      const result = yield* call.next(call.request, callOptions);
      outcome = 'success';
      return result;
    } catch (error) {
      const status = failureStatus(error, callOptions.signal);
      if (status !== undefined) {
        outcome = circuits.outcomeOf(path, status.code, status.details, undefined, false);
      }
      throw error;
    } finally {
      method.breaker.release(permit, outcome, clock() - startedAt);
    }
  }
  return Object.assign(circuitBreakerMiddleware, { circuitFor: circuits.circuitFor });
}
