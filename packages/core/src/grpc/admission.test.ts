import { describe, expect, it } from 'vitest';
import { CircuitOpenError } from '../errors/circuit-open-error.js';
import { QueueFullError } from '../errors/queue-full-error.js';
import { RateLimitError } from '../errors/rate-limit-error.js';
import { createTokenBucket } from '../limit/token-bucket.js';
import { createPool } from '../pool/pool.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { admitGrpcCall } from './admission.js';
import { createGrpcCircuits } from './circuits.js';
import { GrpcStatus } from './status.js';

const PATH = '/pkg.Svc/Method';

describe('admitGrpcCall', () => {
  it('refuses an open circuit UNAVAILABLE before a token is spent', () => {
    const clock = createManualClock();
    const circuits = createGrpcCircuits({
      clock,
      breaker: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 1_000 },
    });
    const breaker = circuits.methodCircuit(PATH).breaker;
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    const bucket = createTokenBucket({ capacity: 1, refillPerSecond: 1, clock });
    const refused = admitGrpcCall({ circuits, bucket }, PATH, undefined);
    expect(refused).toMatchObject({ admitted: false, code: GrpcStatus.UNAVAILABLE });
    expect(refused.admitted === false && refused.error).toBeInstanceOf(CircuitOpenError);
    // The token is still there.
    expect(bucket.tryAcquire().ok).toBe(true);
  });

  it('refuses a spent rate limit and a full queue RESOURCE_EXHAUSTED, with the core error', () => {
    const clock = createManualClock();
    const bucket = createTokenBucket({ capacity: 1, refillPerSecond: 1, clock });
    const pool = createPool({ concurrency: 1, maxQueue: 0 });
    expect(admitGrpcCall({ bucket, pool }, PATH, undefined)).toMatchObject({
      admitted: true,
      slot: 'taken',
    });
    const limited = admitGrpcCall({ bucket, pool }, PATH, undefined);
    expect(limited).toMatchObject({ admitted: false, code: GrpcStatus.RESOURCE_EXHAUSTED });
    expect(limited.admitted === false && limited.error).toBeInstanceOf(RateLimitError);
    clock.advance(1_000);
    const full = admitGrpcCall({ bucket, pool }, PATH, undefined);
    expect(full).toMatchObject({ admitted: false, code: GrpcStatus.RESOURCE_EXHAUSTED });
    expect(full.admitted === false && full.error).toBeInstanceOf(QueueFullError);
  });
});
