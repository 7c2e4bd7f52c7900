import type { CircuitBreaker, CircuitBreakerOptions } from '@breakwater/core';
import {
  createGrpcCircuits,
  type GrpcCircuitOptions,
  type GrpcCircuitScope,
  type GrpcCircuits,
  type GrpcStatusClassifier,
} from '@breakwater/core/grpc';
import { optionPath } from '@breakwater/core/internal';
import type { Clock } from '@breakwater/core/time';
import type { ClientMiddleware } from 'nice-grpc-common';
import { admissionStage } from './internals/admission.js';
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
  const circuits = circuitRegistry(fn, '', isBreaker(options) ? options : circuit, classify);
  return Object.assign(admissionStage({ circuits }), { circuitFor: circuits.circuitFor });
}

/**
 * The circuits of `part`, checked by core (errors under option path `path`
 * of factory `fn`): one breaker per scope key, timed by the breaker
 * options' `clock`, else `clock`.
 * @internal
 */
export function circuitRegistry(
  fn: string,
  path: string,
  part: GrpcCircuitPart,
  classify: GrpcStatusClassifier | undefined,
  clock?: Clock,
): GrpcCircuits {
  const shared = isBreaker(part) ? part : undefined;
  const { scope, ...breaker } = (shared === undefined ? part : {}) as CircuitBreakerOptions & {
    scope?: GrpcCircuitScope;
  };
  // Core checks the breaker options (and builds one breaker, thrown away: each key gets its own).
  resolvePart(fn, 'circuit', { circuit: shared ?? breaker }, path);
  const options: GrpcCircuitOptions =
    shared === undefined ? { breaker } : { breakerFor: () => shared };
  if (scope !== undefined) options.scope = scope;
  if (classify !== undefined) options.classify = classify;
  const timing = breaker.clock ?? clock;
  if (timing !== undefined) options.clock = timing;
  return optionPath(path, () => createGrpcCircuits(options), fn);
}
