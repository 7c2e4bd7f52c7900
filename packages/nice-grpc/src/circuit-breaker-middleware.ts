import type { CallOutcome, CircuitBreaker, Clock } from '@breakwater/core';
import { optionPath } from '@breakwater/core';
import { createGrpcCircuits, type GrpcCircuitOptions } from '@breakwater/core/grpc';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { failureStatus, refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
import type { UnaryStage } from './internals/unary-stage.js';

/**
 * Options of {@link circuitBreakerMiddleware}, the same as the grpc-js
 * `circuitBreakerInterceptor`'s (`GrpcCircuitOptions` of
 * `@breakwater/core/grpc`): `scope` (`'method'` | `'service'` | `'client'`,
 * defaults to `'method'`), `breaker` (core breaker settings, defaults to the
 * core defaults), `breakerFor` (supply circuits, e.g. shared with a grpc-js
 * client), `classify` (defaults to `createGrpcStatusClassifier()`), `clock`
 * (defaults to `systemClock`).
 */
export type CircuitBreakerMiddlewareOptions = GrpcCircuitOptions;

/** A circuit-breaker middleware that can also show its circuits. */
export type CircuitBreakerMiddleware = ClientMiddleware & {
  /** The circuit guarding `path` (created on first use). */
  circuitFor(path: string): CircuitBreaker;
};

/**
 * Guards calls with the core circuit breaker, one circuit per method (or
 * service, or client). A refused call is never sent: it rejects with a
 * `ClientError` `UNAVAILABLE` whose `cause` is the `CircuitOpenError` (with
 * `retryAfterMs`). Every call type is guarded; a call counts once, after its
 * retries when this middleware is outside the retry middleware. Statuses
 * the classifier does not count (`INVALID_ARGUMENT`, pushback, …) and
 * caller cancellation are neutral; a Breakwater deadline counts as
 * `DEADLINE_EXCEEDED` (a slow server).
 */
export function circuitBreakerMiddleware(
  options: CircuitBreakerMiddlewareOptions = {},
): CircuitBreakerMiddleware {
  return circuitBreakerMiddlewareOf(
    optionPath('', () => circuitBreakerStage(options), 'circuitBreakerMiddleware'),
  );
}

/** {@link circuitBreakerMiddleware} around its stage (shared with `resilienceMiddleware`). @internal */
export function circuitBreakerMiddlewareOf(stage: CircuitBreakerStage): CircuitBreakerMiddleware {
  const { clock } = stage;
  async function* circuitBreakerMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const path = call.method.path;
    const breaker = stage.circuitFor(path);
    const permit = stage.acquire(breaker, path);
    const startedAt = clock();
    // A stream its consumer leaves early ends in `finally` with neither result: neutral.
    let outcome: CallOutcome = 'neutral';
    try {
      const result = yield* call.next(call.request, callOptions);
      outcome = 'success';
      return result;
    } catch (error) {
      outcome = stage.outcomeOf(path, error, callOptions.signal);
      throw error;
    } finally {
      breaker.release(permit, outcome, clock() - startedAt);
    }
  }
  return Object.assign(circuitBreakerMiddleware, { circuitFor: stage.circuitFor });
}

/** The unary part of {@link circuitBreakerMiddleware}, with what its middleware shares. @internal */
export interface CircuitBreakerStage extends UnaryStage {
  circuitFor(path: string): CircuitBreaker;
  /** A permit of `breaker`, or throws the `UNAVAILABLE` refusal. */
  acquire(breaker: CircuitBreaker, path: string): number;
  /** How a failed call counts. */
  outcomeOf(path: string, error: unknown, signal: AbortSignal | undefined): CallOutcome;
  clock: Clock;
}

/** The unary stage of {@link circuitBreakerMiddleware}. @internal */
export function circuitBreakerStage(options: CircuitBreakerMiddlewareOptions): CircuitBreakerStage {
  // The same registry as the grpc-js interceptor's: both adapters key and count circuits alike.
  const circuits = createGrpcCircuits(options);
  const { clock } = circuits;
  const acquire = (breaker: CircuitBreaker, path: string): number => {
    const permit = breaker.tryAcquire();
    if (permit >= 0) return permit;
    throw refusal(path, Status.UNAVAILABLE, circuits.openError(circuits.methodCircuit(path)));
  };
  const outcomeOf = (
    path: string,
    error: unknown,
    signal: AbortSignal | undefined,
  ): CallOutcome => {
    const status = failureStatus(error, signal);
    if (status === undefined) return 'neutral';
    return circuits.outcomeOf(path, status.code, status.details, undefined, false);
  };
  return {
    circuitFor: circuits.circuitFor,
    acquire,
    outcomeOf,
    clock,
    async unary(call, callOptions, chain, index) {
      const path = call.method.path;
      const breaker = circuits.circuitFor(path);
      const permit = acquire(breaker, path);
      const startedAt = clock();
      let outcome: CallOutcome = 'neutral';
      try {
        const result = await chain.next(call, callOptions, index);
        outcome = 'success';
        return result;
      } catch (error) {
        outcome = outcomeOf(path, error, callOptions.signal);
        throw error;
      } finally {
        breaker.release(permit, outcome, clock() - startedAt);
      }
    },
  };
}
