import {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  CircuitOpenError,
  type Clock,
  checkOptions,
  createCircuitBreaker,
  type KnownKeys,
  optionPath,
  optionTypeError,
  systemClock,
} from '@breakwater/core';
import { type Interceptor, status as Status, type StatusObject } from '@grpc/grpc-js';
import { type CallObserver, ObservedCall } from './internals/observed-call.js';
import { RefusedCall } from './internals/refused-call.js';
import { type Stage, stageInterceptor } from './internals/stage.js';
import { statusWithCause } from './internals/status.js';
import {
  createGrpcStatusClassifier,
  type GrpcStatusClassifier,
  trailerGetter,
} from './status-classifier.js';

/** Options of {@link circuitBreakerInterceptor}. */
export interface CircuitBreakerInterceptorOptions {
  /** One circuit per `'method'`, per `'service'`, or one for the whole `'client'`. Defaults to `'method'`. */
  scope?: 'method' | 'service' | 'client';
  /** Settings of each circuit (core breaker options; name and clock are filled in). Defaults to the core defaults. */
  breaker?: Omit<CircuitBreakerOptions, 'name'>;
  /** Supplies the circuit for a scope key instead (e.g. shared with other clients). Defaults to one new breaker per key. */
  breakerFor?: (key: string) => CircuitBreaker;
  /** Status → verdict; only `countForCircuit` failures count. Defaults to `createGrpcStatusClassifier()`. */
  classify?: GrpcStatusClassifier;
  /** Time source for call durations (slow-call rules). Defaults to `systemClock`. */
  clock?: Clock;
}

/** Keys of {@link CircuitBreakerInterceptorOptions}. @internal */
export const CIRCUIT_BREAKER_INTERCEPTOR_KEYS = {
  scope: true,
  breaker: true,
  breakerFor: true,
  classify: true,
  clock: true,
} as const satisfies KnownKeys<CircuitBreakerInterceptorOptions>;

/** The circuit of one method path, shared by its calls. */
interface MethodCircuit {
  breaker: CircuitBreaker;
  path: string;
  key: string;
}

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
  checkOptions(undefined, options, CIRCUIT_BREAKER_INTERCEPTOR_KEYS, '', false);
  const scope = options.scope ?? 'method';
  if (scope !== 'method' && scope !== 'service' && scope !== 'client') {
    throw optionTypeError(
      'scope',
      `must be one of 'method', 'service', 'client', got ${String(scope)}`,
    );
  }
  const clock = options.clock ?? systemClock;
  const classify = options.classify ?? createGrpcStatusClassifier();
  const make =
    options.breakerFor ??
    ((key: string) => createCircuitBreaker({ clock, ...options.breaker, name: key }));
  // Breakers are built on first use; build one now so bad `breaker` options throw here.
  if (options.breakerFor === undefined) optionPath('breaker', () => make('client'));
  const byKey = new Map<string, CircuitBreaker>();
  const byPath = new Map<string, MethodCircuit>();

  const keyOf = (path: string) =>
    scope === 'method'
      ? path
      : scope === 'service'
        ? path.slice(1, path.lastIndexOf('/'))
        : 'client';
  const methodCircuit = (path: string): MethodCircuit => {
    let method = byPath.get(path);
    if (method === undefined) {
      const key = keyOf(path);
      let breaker = byKey.get(key);
      if (breaker === undefined) {
        breaker = make(key);
        byKey.set(key, breaker);
      }
      method = { breaker, path, key };
      byPath.set(path, method);
    }
    return method;
  };
  const circuitFor = (path: string): CircuitBreaker => methodCircuit(path).breaker;

  const observer: CallObserver<MethodCircuit> = {
    settle({ breaker, path }, permit, startedAt, status: StatusObject, cancelledByCaller) {
      const duration = clock() - startedAt;
      if (status.code === Status.OK) {
        breaker.release(permit, 'success', duration);
        return;
      }
      const verdict = classify({
        path,
        code: status.code,
        details: status.details,
        trailer: trailerGetter(status.metadata),
        cancelledByCaller,
      });
      breaker.release(permit, verdict.countForCircuit === false ? 'neutral' : 'failure', duration);
    },
  };

  return {
    circuitFor,
    intercept(callOptions, chain, index, final) {
      const method = methodCircuit(callOptions.method_definition.path);
      const permit = method.breaker.tryAcquire();
      if (permit < 0) {
        const error = new CircuitOpenError({
          retryAfterMs: method.breaker.retryAfterMs(),
          circuit: method.key,
        });
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
