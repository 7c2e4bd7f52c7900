import type { CircuitBreaker, CircuitBreakerOptions } from '@breakwater/core';
import type { TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import type { TRPCClassify } from './internals/call.js';
import { partLink, stackOf } from './resilience-link.js';

/** Options of {@link circuitBreakerLink}: `createCircuitBreaker`'s options plus the classifier. */
export interface CircuitBreakerLinkOptions extends CircuitBreakerOptions {
  /** Maps a failed call's error to a verdict; `countForCircuit: false` is neutral. Defaults to `classifyTRPCError`. */
  classify?: TRPCClassify;
}

/**
 * Stops calling an unhealthy endpoint (`circuit` of `resilienceLink`): when
 * the circuit is open a call is refused at once with a `TRPCClientError`
 * whose `cause` is a core `CircuitOpenError` (with `retryAfterMs`), and
 * nothing is sent. Each call gives one outcome, judged by the classifier:
 * failures counted, 4xx domain errors and cancellations neutral. Takes an
 * existing breaker (to share it or watch `onStateChange`) or its options.
 * @example
 * circuitBreakerLink({ failureThreshold: 5, openDurationMs: 10_000 })
 */
export function circuitBreakerLink<TRouter extends AnyRouter = AnyRouter>(
  circuit: CircuitBreaker | CircuitBreakerLinkOptions = {},
): TRPCLink<TRouter> {
  if (typeof (circuit as CircuitBreaker).tryAcquire === 'function') {
    return stackOf('circuitBreakerLink', { circuit: circuit as CircuitBreaker });
  }
  return partLink('circuitBreakerLink', circuit, undefined, 'circuit');
}
