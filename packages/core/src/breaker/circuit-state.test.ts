import { describe, expect, it } from 'vitest';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import {
  checkCircuit,
  createCircuitBreakerState,
  isolateCircuit,
  recordFailure,
  recordNeutral,
  recordSuccess,
  reopenCircuit,
  resetCircuit,
} from './circuit-state.js';
import type { CircuitBreakerState } from './machine.js';
import type { CircuitBreakerConfig } from './types.js';

type S = CircuitBreakerState;
const fail = (s: S, now = 0, generation?: number) =>
  recordFailure(s, s.config, now, generation === undefined ? {} : { generation });
const succeed = (s: S, now = 0, generation?: number) =>
  recordSuccess(s, s.config, now, generation === undefined ? {} : { generation });
const failTimes = (s: S, n: number, now = 0) => {
  for (let i = 0; i < n; i++) s = fail(s, now);
  return s;
};
/** Admits one call at `now`; returns the admission and the new state. */
const check = (s: S, now: number) => {
  const { result, updatedState } = checkCircuit(s, now);
  return [result, updatedState] as const;
};
const opened = (config: Partial<CircuitBreakerConfig>) => {
  const s = createCircuitBreakerState({
    ...COUNT_ONLY_CIRCUIT,
    failureThreshold: 1,
    openDurationMs: 100,
    ...config,
  });
  return fail(s, 0);
};

describe('closed', () => {
  it('opens after failureThreshold consecutive failures', () => {
    let s = createCircuitBreakerState({ ...COUNT_ONLY_CIRCUIT, failureThreshold: 3 });
    s = failTimes(s, 2);
    expect(s.state).toBe('closed');
    expect(check(s, 0)[0]).toMatchObject({ admitted: true, probe: false });
    s = fail(s, 50);
    expect(s).toMatchObject({ state: 'open', openedAt: 50, consecutiveFailures: 3 });
  });

  it('a success resets the streak; a neutral outcome neither counts nor resets', () => {
    let s = createCircuitBreakerState({ ...COUNT_ONLY_CIRCUIT, failureThreshold: 3 });
    s = succeed(failTimes(s, 2));
    expect(s.consecutiveFailures).toBe(0);
    s = failTimes(s, 2);
    s = recordNeutral(s, s.config, 0);
    s = recordNeutral(s, s.config, 0);
    expect(s).toMatchObject({ state: 'closed', consecutiveFailures: 2 });
    expect(fail(s).state).toBe('open');
  });

  it('never mutates the state it is given', () => {
    const s0 = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      window: { type: 'count', size: 4, failureRateThreshold: 1 },
    });
    const before = JSON.stringify(s0);
    const s1 = fail(s0);
    checkCircuit(s1, 10);
    expect(JSON.stringify(s0)).toBe(before);
    expect(s0.state).toBe('closed');
    expect(s1.state).toBe('open');
  });
});

describe('open', () => {
  it('refuses with retryAfterMs until the cool-down ends, then lazily goes half-open', () => {
    const s = opened({});
    const [refused, s1] = check(s, 40);
    expect(refused).toMatchObject({ admitted: false, permit: -1, retryAfterMs: 60, state: 'open' });
    expect(check(s1, 99)[0].retryAfterMs).toBe(1);
    const [probe, s2] = check(s1, 100);
    expect(probe).toMatchObject({ admitted: true, probe: true, state: 'half-open' });
    expect(probe.generation).toBe(s.generation + 1);
    expect(probe.permit).toBe(probe.generation * 2 + 1);
    expect(s2).toMatchObject({ state: 'half-open', changedAt: 100, probesAdmitted: 1 });
  });

  it('openDurationMs 0 admits a probe at the next check', () => {
    expect(check(opened({ openDurationMs: 0 }), 0)[0]).toMatchObject({ probe: true });
  });

  it('ignores a stray success or failure reported while open', () => {
    const s = opened({});
    expect(succeed(s, 10)).toMatchObject({ state: 'open', generation: s.generation });
    expect(fail(s, 10)).toMatchObject({ state: 'open', openedAt: 0 });
  });
});

describe('half-open', () => {
  it('admits exactly halfOpenMaxCalls probes and refuses the rest with retryAfterMs 0', () => {
    let s = opened({ halfOpenMaxCalls: 3 });
    const admitted: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const [r, next] = check(s, 100);
      admitted.push(r.admitted);
      s = next;
      if (!r.admitted) expect(r.retryAfterMs).toBe(0);
    }
    expect(admitted).toEqual([true, true, true, false, false]);
  });

  it('a failed probe re-opens, multiplies the open duration (capped) and restarts the cool-down', () => {
    let s = opened({ backoffMultiplier: 3, maxOpenDurationMs: 500 });
    const durations: number[] = [];
    let now = 0;
    for (let round = 0; round < 3; round++) {
      now += s.openDurationMs;
      const [probe, next] = check(s, now);
      expect(probe.probe).toBe(true);
      now += 7; // the probe takes a while; the cool-down restarts from its failure
      s = fail(next, now, probe.generation);
      expect(s).toMatchObject({ state: 'open', openedAt: now });
      durations.push(s.openDurationMs);
      expect(check(s, now + s.openDurationMs - 1)[0].admitted).toBe(false);
    }
    expect(durations).toEqual([300, 500, 500]);
  });

  it('closes after successThreshold successes, with counters and open duration reset', () => {
    let s = opened({ halfOpenMaxCalls: 3, successThreshold: 2, backoffMultiplier: 2 });
    s = fail(check(s, 100)[1], 100); // failed probe: open for 200 from 100
    const [a, s1] = check(s, 300);
    const [b, s2] = check(s1, 300);
    s = succeed(s2, 301, a.generation);
    expect(s.state).toBe('half-open');
    s = succeed(s, 302, b.generation);
    expect(s).toMatchObject({
      state: 'closed',
      consecutiveFailures: 0,
      openDurationMs: 100,
      changedAt: 302,
    });
  });

  it('a neutral probe frees its slot at once, without closing or restarting the cool-down', () => {
    let s = opened({});
    const [probe, s1] = check(s, 100);
    expect(check(s1, 100)[0].admitted).toBe(false);
    s = recordNeutral(s1, s1.config, 150, { generation: probe.generation });
    expect(s).toMatchObject({ state: 'half-open', openedAt: 0, probesAdmitted: 0 });
    const [again] = check(s, 150);
    expect(again).toMatchObject({ admitted: true, probe: true, generation: probe.generation });
  });

  it('halfOpenMaxCalls Infinity lets all traffic through, keeps the streak, and a success closes', () => {
    let s = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 3,
      openDurationMs: 100,
      halfOpenMaxCalls: Number.POSITIVE_INFINITY,
    });
    s = failTimes(s, 3);
    for (let i = 0; i < 1000; i++) {
      const [r, next] = check(s, 100);
      expect(r.admitted).toBe(true);
      s = next;
    }
    expect(s).toMatchObject({ state: 'half-open', consecutiveFailures: 3 });
    const reopened = fail(s, 120);
    expect(reopened).toMatchObject({ state: 'open', openedAt: 120, consecutiveFailures: 4 });
    expect(succeed(s, 120)).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
  });
});

describe('generations', () => {
  it('every transition bumps the generation', () => {
    let s = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 1,
      openDurationMs: 10,
    });
    const gens = [s.generation];
    s = fail(s);
    gens.push(s.generation);
    s = check(s, 10)[1];
    gens.push(s.generation);
    s = succeed(s, 10);
    gens.push(s.generation);
    expect(gens).toEqual([0, 1, 2, 3]);
    expect(s.state).toBe('closed');
  });

  it('a failure admitted while closed does not count once the circuit has opened', () => {
    let s = createCircuitBreakerState({
      ...COUNT_ONLY_CIRCUIT,
      failureThreshold: 2,
      openDurationMs: 100,
    });
    const [late] = check(s, 0);
    s = failTimes(s, 2);
    s = check(s, 100)[1];
    expect(s.state).toBe('half-open');
    const after = fail(s, 101, late.generation);
    expect(after).toEqual(s);
  });

  it('results of probes from a re-opened generation neither close nor re-open it', () => {
    let s = opened({ halfOpenMaxCalls: 2 });
    const [p1, s1] = check(s, 100);
    const [p2, s2] = check(s1, 100);
    s = fail(s2, 110, p1.generation);
    expect(s).toMatchObject({ state: 'open', openedAt: 110 });
    expect(succeed(s, 111, p2.generation)).toEqual(s);
    expect(recordNeutral(s, s.config, 111, { generation: p2.generation })).toEqual(s);
    // And into the next half-open generation: the stale probe does not take or free a slot.
    const [p3, s3] = check(s, 210);
    expect(succeed(s3, 211, p2.generation)).toEqual(s3);
    expect(succeed(s3, 211, p3.generation).state).toBe('closed');
  });
});

describe('isolate and reset', () => {
  it('isolate refuses everything (retryAfterMs Infinity) until reset', () => {
    let s = isolateCircuit(
      createCircuitBreakerState({ ...COUNT_ONLY_CIRCUIT, openDurationMs: 10 }),
      5,
    );
    const [r] = check(s, 1_000_000);
    expect(r).toMatchObject({ admitted: false, retryAfterMs: Number.POSITIVE_INFINITY });
    s = resetCircuit(s, 6);
    expect(s).toMatchObject({ state: 'closed', isolated: false, consecutiveFailures: 0 });
    expect(check(s, 6)[0].admitted).toBe(true);
  });
});

describe('reopenCircuit', () => {
  it('restarts the cool-down of an open circuit from now, keeps the duration, grows the streak', () => {
    const s0 = opened({ openDurationMs: 100, backoffMultiplier: 2 });
    expect(recordFailure(s0, s0.config, 60)).toEqual(s0);
    const before = JSON.stringify(s0);
    const s1 = reopenCircuit(s0, 60);
    expect(JSON.stringify(s0)).toBe(before);
    expect(s1).toMatchObject({
      state: 'open',
      openedAt: 60,
      openDurationMs: 100,
      consecutiveFailures: s0.consecutiveFailures + 1,
      generation: s0.generation + 1,
    });
    expect(check(s1, 159)[0]).toMatchObject({ admitted: false, retryAfterMs: 1 });
    expect(check(s1, 160)[0]).toMatchObject({ admitted: true, probe: true });
    // A call admitted before the re-open reports into an older generation.
    expect(succeed(s1, 70, s0.generation)).toEqual(s1);
  });

  it('also restarts a cool-down that has run out (lazily half-open)', () => {
    const s1 = reopenCircuit(opened({ openDurationMs: 100 }), 500);
    expect(check(s1, 599)[0].admitted).toBe(false);
    expect(check(s1, 600)[0].admitted).toBe(true);
  });

  it('leaves closed, half-open and isolated circuits unchanged', () => {
    const closed = failTimes(
      createCircuitBreakerState({ ...COUNT_ONLY_CIRCUIT, failureThreshold: 3 }),
      1,
    );
    const halfOpen = check(opened({ openDurationMs: 100 }), 100)[1];
    const isolated = isolateCircuit(closed, 5);
    for (const s of [closed, halfOpen, isolated]) expect(reopenCircuit(s, 1000)).toBe(s);
    expect(halfOpen.state).toBe('half-open');
  });
});
