import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import {
  checkCircuit,
  createCircuitBreakerState,
  halfOpenCircuit,
  isolateCircuit,
  recordFailure,
  recordNeutral,
  recordSuccess,
  resetCircuit,
} from './circuit-state.js';
import { type CircuitBreakerState, isProbePermit } from './machine.js';
import { toSnapshot } from './snapshot.js';
import type { CallOutcome, CircuitBreakerConfig } from './types.js';

const configArb: fc.Arbitrary<Partial<CircuitBreakerConfig>> = fc
  .record({
    failureThreshold: fc.integer({ min: 1, max: 4 }),
    openDurationMs: fc.integer({ min: 0, max: 50 }),
    backoffMultiplier: fc.constantFrom(1, 1.5, 2, 3),
    capFactor: fc.integer({ min: 1, max: 8 }),
    halfOpenMaxCalls: fc.constantFrom(1, 2, 3, 4, Number.POSITIVE_INFINITY),
    successSeed: fc.integer({ min: 1, max: 4 }),
    window: fc.option(
      fc.oneof(
        fc.record({
          type: fc.constant('count' as const),
          size: fc.integer({ min: 1, max: 6 }),
          failureRateThreshold: fc.constantFrom(0.25, 0.5, 1),
        }),
        fc.record({
          type: fc.constant('time' as const),
          sizeMs: fc.integer({ min: 1, max: 200 }),
          minimumCalls: fc.integer({ min: 1, max: 4 }),
          failureRateThreshold: fc.constantFrom(0.25, 0.5, 1),
        }),
      ),
      { nil: undefined },
    ),
    slowRate: fc.constantFrom(0.5, 1),
  })
  .map(({ capFactor, successSeed, slowRate, window, ...c }) => ({
    ...c,
    maxOpenDurationMs: c.openDurationMs * capFactor,
    successThreshold: Math.min(successSeed, c.halfOpenMaxCalls),
    ...(window === undefined
      ? {}
      : { window, slowCall: { durationMs: 30, rateThreshold: slowRate } }),
  }));

type Op =
  | { t: 'acquire' }
  | { t: 'release'; i: number; outcome: CallOutcome; durationMs: number }
  | { t: 'report'; outcome: 'success' | 'failure' }
  | { t: 'advance'; ms: number }
  | { t: 'isolate' }
  | { t: 'halfOpen' }
  | { t: 'reset' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ t: 'acquire' } as const) },
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('release' as const),
      i: fc.nat(),
      outcome: fc.constantFrom<CallOutcome>('success', 'failure', 'neutral'),
      durationMs: fc.integer({ min: 0, max: 60 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('report' as const),
      outcome: fc.constantFrom('success' as const, 'failure' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('advance' as const),
      ms: fc.integer({ min: 0, max: 80 }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom({ t: 'isolate' } as const, { t: 'reset' } as const) },
  // A health signal: half-open at once, whatever the cool-down says.
  { weight: 2, arbitrary: fc.constant({ t: 'halfOpen' } as const) },
);

const recorders = { success: recordSuccess, failure: recordFailure, neutral: recordNeutral };

describe('breaker properties', () => {
  it('probes never exceed halfOpenMaxCalls per open duration, state stays valid, pure and stateful agree', () => {
    fc.assert(
      fc.property(configArb, fc.array(opArb, { maxLength: 150 }), (config, ops) => {
        const clock = createManualClock(0);
        const breaker = createCircuitBreaker({ ...config, clock });
        let pure: CircuitBreakerState = createCircuitBreakerState(config);
        const rejections: number[] = [];
        breaker.onReject((e) => rejections.push(e.retryAfterMs));
        const outstanding: number[] = [];

        for (const op of ops) {
          const now = clock.now;
          if (op.t === 'acquire') {
            const permit = breaker.tryAcquire();
            const { result, updatedState } = checkCircuit(pure, now);
            pure = updatedState;
            expect(permit).toBe(result.permit);
            expect(isProbePermit(permit)).toBe(result.probe);
            if (permit >= 0) outstanding.push(permit);
            else expect(rejections.pop()).toBe(result.retryAfterMs);
          } else if (op.t === 'release' && outstanding.length > 0) {
            const [permit] = outstanding.splice(op.i % outstanding.length, 1) as [number];
            breaker.release(permit, { outcome: op.outcome, durationMs: op.durationMs });
            pure = recorders[op.outcome](pure, pure.config, now, {
              generation: Math.floor(permit / 2),
              durationMs: op.durationMs,
            });
          } else if (op.t === 'report') {
            if (op.outcome === 'success') breaker.onSuccess();
            else breaker.onFailure();
            pure = recorders[op.outcome](pure, pure.config, now);
          } else if (op.t === 'advance') {
            clock.advance(op.ms);
          } else if (op.t === 'isolate') {
            breaker.isolate();
            pure = isolateCircuit(pure, now);
          } else if (op.t === 'halfOpen') {
            const before = pure.state;
            breaker.halfOpen();
            pure = halfOpenCircuit(pure, now);
            if (before === 'open' && !pure.isolated) expect(pure.state).toBe('half-open');
            else expect(pure.state).toBe(before);
          } else if (op.t === 'reset') {
            breaker.reset();
            pure = resetCircuit(pure, now);
          }

          expect(['closed', 'open', 'half-open']).toContain(pure.state);
          expect(breaker.toJSON()).toEqual(toSnapshot(pure));
          const max = pure.config.halfOpenMaxCalls;
          expect(pure.probesAdmitted).toBeLessThanOrEqual(max);
          if (pure.state === 'half-open') {
            // Probes of the current generation still running: at most `max`, plus one per open
            // duration spent half-open (a hanging probe's slot is leased for one open duration).
            const live = outstanding.filter(
              (p) => p % 2 === 1 && Math.floor(p / 2) === pure.generation,
            );
            const leases =
              pure.openDurationMs > 0
                ? Math.floor((clock.now - pure.changedAt) / pure.openDurationMs)
                : 0;
            expect(live.length).toBeLessThanOrEqual(max + leases);
          }
          expect(pure.openDurationMs).toBeLessThanOrEqual(pure.config.maxOpenDurationMs);
          expect(pure.openDurationMs).toBeGreaterThanOrEqual(pure.config.openDurationMs);
        }
        expect(['closed', 'open', 'half-open']).toContain(breaker.state);
      }),
      { seed: 42, numRuns: 400 },
    );
  });
});
