import type { CallOutcome } from '@breakwater/core';
import type { BulkheadStage } from '../bulkhead-middleware.js';
import type { CircuitBreakerStage } from '../circuit-breaker-middleware.js';
import type { RateLimitStage } from '../rate-limit-middleware.js';
import type { UnaryStage } from './unary-stage.js';

/**
 * The circuit breaker, rate limit and bulkhead of `resilienceMiddleware` as
 * one unary stage, in that order: the circuit's permit, then a token, then a
 * free slot, all taken synchronously, and one `await` for everything below.
 * Chained as three stages, a call would run two more async functions (each
 * a suspended frame, a promise and a microtask hop per call). Behaviour is
 * that of the three stages in a row: an open circuit refuses before a token
 * or slot is spent; a refused token counts for the circuit as the rate-limit
 * stage's refusal would; a call that finds no free slot (or whose signal has
 * already aborted) goes through the bulkhead stage's own queueing path.
 * @internal
 */
export function guardStage(
  circuit: CircuitBreakerStage | undefined,
  rateLimit: RateLimitStage | undefined,
  bulkhead: BulkheadStage | undefined,
): UnaryStage {
  const pool = bulkhead?.pool;
  return {
    async unary(call, options, chain, index) {
      const path = call.method.path;
      const breaker = circuit?.circuitFor(path);
      // Throws the UNAVAILABLE refusal when the circuit is open: nothing is taken yet.
      const permit =
        breaker === undefined ? -1 : (circuit as CircuitBreakerStage).acquire(breaker, path);
      const startedAt = breaker === undefined ? 0 : (circuit as CircuitBreakerStage).clock();
      let outcome: CallOutcome = 'neutral';
      let slot = false;
      try {
        rateLimit?.take(path);
        // Fast path: a free slot (so an empty queue) for a live call, as in the bulkhead stage.
        slot = pool !== undefined && !options.signal?.aborted && pool.tryTake();
        const response = await (pool === undefined || slot
          ? chain.next(call, options, index)
          : (bulkhead as BulkheadStage).unary(call, options, chain, index));
        outcome = 'success';
        return response;
      } catch (error) {
        if (breaker !== undefined) {
          outcome = (circuit as CircuitBreakerStage).outcomeOf(path, error, options.signal);
        }
        throw error;
      } finally {
        if (slot) (pool as NonNullable<typeof pool>).give(outcome === 'success');
        if (breaker !== undefined) {
          breaker.release(permit, outcome, (circuit as CircuitBreakerStage).clock() - startedAt);
        }
      }
    },
  };
}
