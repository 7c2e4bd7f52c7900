import type { CircuitBreaker } from '../breaker/types.js';
import type { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { QueueFullError } from '../errors/queue-full-error.js';
import type { RateLimitError } from '../errors/rate-limit-error.js';
import type { Pool } from '../pool/pool.js';
import type { AdaptiveLimiter, LimitPermit } from './adaptive-limiter.js';
import type { Criticality } from './criticality.js';
import type { TokenBucket } from './token-bucket.js';

/** What may admit one call: each part is skipped when absent. @internal */
export interface AdmissionParts {
  /** The call's circuit (`circuit`). */
  readonly breaker?: CircuitBreaker | undefined;
  /** The call's token bucket (`rateLimit`): one token per call. */
  readonly bucket?: TokenBucket | undefined;
  /** The call's adaptive limit (`concurrency.adaptive`), used instead of `pool`. */
  readonly limiter?: AdaptiveLimiter | undefined;
  /** The call's bulkhead (`concurrency`). */
  readonly pool?: Pool | undefined;
}

/** A call that may go on: what it holds, and whether it must still wait in the pool's queue. @internal */
export interface Admitted {
  readonly admitted: true;
  /** The circuit's permit (`-1` without a circuit): released once, with the call's outcome. */
  readonly permit: number;
  /** The slot under the adaptive limit, when there is one. */
  readonly limit: LimitPermit | undefined;
  /** `'taken'`: a pool slot is held (give it back at the end); `'queue'`: wait through `pool.run`; `'none'`: no pool. */
  readonly slot: 'taken' | 'queue' | 'none';
}

/** A call refused before it holds anything. @internal */
export type Refused =
  | { readonly admitted: false; readonly reason: 'circuit-open'; readonly error?: undefined }
  | { readonly admitted: false; readonly reason: 'rate-limited'; readonly error: RateLimitError }
  | {
      readonly admitted: false;
      readonly reason: 'concurrency-limit';
      readonly error: ConcurrencyLimitError;
    }
  | { readonly admitted: false; readonly reason: 'queue-full'; readonly error: QueueFullError };

/**
 * Admits one call in the order every entry point shares, after the call's
 * deadline has started (so a wait in the queue counts against `timeoutMs`):
 *
 * 1. circuit — an open circuit refuses before a token or a slot is spent;
 * 2. rate limit — one token per call;
 * 3. concurrency — a slot of the adaptive limit, or of the pool (free now, or
 *    a place in its queue; a full queue refuses).
 *
 * A refusal gives back what was taken before it (the circuit's permit, as
 * neutral: the call was never sent). The caller runs the queue wait itself,
 * since how a call waits is the framework's.
 * @internal
 */
export function admitCall(parts: AdmissionParts, criticality?: Criticality): Admitted | Refused {
  const { breaker, bucket, limiter, pool } = parts;
  const permit = breaker === undefined ? -1 : breaker.tryAcquire();
  if (breaker !== undefined && permit < 0) return { admitted: false, reason: 'circuit-open' };
  // What a refusal after the circuit admitted gives back: the call was never sent.
  const refuse = <R extends Refused>(refusal: R): R => {
    if (permit >= 0) breaker?.release(permit, { outcome: 'neutral' });
    return refusal;
  };
  if (bucket !== undefined) {
    const token = bucket.tryAcquire();
    if (!token.ok) return refuse({ admitted: false, reason: 'rate-limited', error: token.error });
  }
  let limit: LimitPermit | undefined;
  if (limiter !== undefined) {
    const taken = limiter.tryAcquire(criticality);
    if (!taken.ok) {
      return refuse({ admitted: false, reason: 'concurrency-limit', error: taken.error });
    }
    limit = taken.value;
  }
  if (pool === undefined) return { admitted: true, permit, limit, slot: 'none' };
  if (pool.tryTake()) return { admitted: true, permit, limit, slot: 'taken' };
  if (pool.queued >= pool.maxQueue) {
    return refuse({
      admitted: false,
      reason: 'queue-full',
      error: new QueueFullError(pool.maxQueue),
    });
  }
  return { admitted: true, permit, limit, slot: 'queue' };
}
