import { describe, expect, it } from 'vitest';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import {
  checkCircuit,
  createCircuitBreakerState,
  halfOpenCircuit,
  recordFailure,
} from './circuit-state.js';
import { isProbePermit } from './machine.js';
import type { CircuitStateChange } from './types.js';

describe('halfOpen(): a health signal moves an open circuit to half-open at once', () => {
  it('admits a probe now instead of after the open duration, and a success closes', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 30_000,
      clock,
    });
    const changes: CircuitStateChange[] = [];
    breaker.onStateChange((e) => changes.push(e));
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    clock.advance(10);
    expect(breaker.tryAcquire()).toBe(-1);
    breaker.halfOpen();
    expect(breaker.state).toBe('half-open');
    const probe = breaker.tryAcquire();
    expect(isProbePermit(probe)).toBe(true);
    // One probe slot: the next call waits for its outcome.
    expect(breaker.tryAcquire()).toBe(-1);
    breaker.release(probe, { outcome: 'success' });
    expect(breaker.state).toBe('closed');
    expect(changes.map((e) => [e.to, e.at])).toEqual([
      ['open', 0],
      ['half-open', 10],
      ['closed', 10],
    ]);
  });

  it('a failed early probe re-opens for the open duration in force', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 1000,
      clock,
    });
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    clock.advance(100);
    breaker.halfOpen();
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    expect(breaker.state).toBe('open');
    expect(breaker.retryAfterMs()).toBe(1000);
  });

  it('leaves a closed, half-open or isolated circuit alone', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 1000,
      clock,
    });
    breaker.halfOpen();
    expect(breaker.state).toBe('closed');
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    clock.advance(1000);
    const probe = breaker.tryAcquire();
    breaker.halfOpen();
    // Still the same generation: the probe's outcome counts.
    breaker.release(probe, { outcome: 'success' });
    expect(breaker.state).toBe('closed');
    breaker.isolate();
    breaker.halfOpen();
    expect(breaker.state).toBe('open');
    expect(breaker.tryAcquire()).toBe(-1);
  });

  it('the pure API does the same and never mutates its input', () => {
    let s = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 5000,
    });
    s = recordFailure(s, s.config, 0);
    const open = s;
    const half = halfOpenCircuit(open, 20);
    expect(open.state).toBe('open');
    expect(half.state).toBe('half-open');
    const { result } = checkCircuit(half, 20);
    expect(result.probe).toBe(true);
    expect(isProbePermit(result.permit)).toBe(true);
    expect(halfOpenCircuit(createCircuitBreakerState(COUNT_ONLY_CIRCUIT), 0).state).toBe('closed');
  });

  it('isProbePermit: only a half-open admission is a probe', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 10,
      clock,
    });
    const closed = breaker.tryAcquire();
    expect(isProbePermit(closed)).toBe(false);
    expect(isProbePermit(-1)).toBe(false);
    breaker.release(closed, { outcome: 'failure' });
    clock.advance(10);
    expect(isProbePermit(breaker.tryAcquire())).toBe(true);
  });

  it('a hanging probe holds its slot for one open duration, then another probe may go (any outcome counts)', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 200,
      clock,
    });
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    clock.advance(200);
    const hanging = breaker.tryAcquire();
    expect(isProbePermit(hanging)).toBe(true);
    clock.advance(199);
    expect(breaker.tryAcquire()).toBe(-1);
    clock.advance(1);
    // The cadence holds while the first probe hangs (a black-holed upstream).
    const second = breaker.tryAcquire();
    expect(isProbePermit(second)).toBe(true);
    expect(breaker.tryAcquire()).toBe(-1);
    // The first probe's late success still closes the circuit; the second's outcome is then stale.
    breaker.release(hanging, { outcome: 'success' });
    expect(breaker.state).toBe('closed');
    breaker.release(second, { outcome: 'failure' });
    expect(breaker.state).toBe('closed');
  });

  it('with openDurationMs 0 the half-open circuit keeps to its probe slots', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 0,
      clock,
    });
    breaker.release(breaker.tryAcquire(), { outcome: 'failure' });
    expect(isProbePermit(breaker.tryAcquire())).toBe(true);
    clock.advance(1_000);
    expect(breaker.tryAcquire()).toBe(-1);
  });
});
