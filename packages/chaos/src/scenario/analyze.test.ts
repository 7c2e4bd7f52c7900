import { describe, expect, it } from 'vitest';
import { type AttemptRecord, analyzeScenario, type CallRecord } from './analyze.js';
import type { PhaseWindow } from './timeline.js';

const phases: PhaseWindow[] = [
  { name: 'healthy', kind: 'healthy', restores: undefined, start: 0, readyAt: 0, end: 1000 },
  { name: 'a down', kind: 'outage', restores: undefined, start: 1000, readyAt: 1000, end: 2000 },
  { name: 'a back', kind: 'recovery', restores: ['a'], start: 2000, readyAt: 2100, end: 3000 },
];

function call(
  client: string,
  id: number,
  startedAt: number,
  ok: boolean,
  latencyMs: number,
  replica?: string,
): CallRecord {
  return {
    client,
    callId: `${client}-${id}`,
    startedAt,
    latencyMs,
    ok,
    error: ok ? undefined : 'UNAVAILABLE',
    replica,
  };
}

describe('analyzeScenario', () => {
  const calls: CallRecord[] = [
    call('x', 0, 100, true, 5, 'a'),
    call('x', 1, 600, true, 7, 'b'),
    call('x', 2, 1100, false, 30),
    call('x', 3, 1600, true, 9, 'b'),
    call('x', 4, 2100, true, 4, 'b'),
    call('x', 5, 2600, true, 6, 'a'),
    call('y', 0, 1100, true, 3, 'b'),
  ];
  const attempts: AttemptRecord[] = [
    { callId: 'x-0', replica: 'a' },
    { callId: 'x-1', replica: 'b' },
    { callId: 'x-2', replica: 'b', count: 3 },
    { callId: 'x-3', replica: 'b' },
    { callId: 'x-4', replica: 'b' },
    { callId: 'x-5', replica: 'a' },
    { callId: 'y-0', replica: 'b' },
    { callId: 'unknown', replica: 'c' },
  ];
  const report = analyzeScenario({
    clients: ['x', 'y'],
    calls,
    attempts,
    phases,
    startedAt: 0,
    endedAt: 3000,
  });
  const x = report.clients[0];

  it('summarizes a client over the run, the fault phases and the outage', () => {
    expect(x).toMatchObject({
      client: 'x',
      offered: 6,
      succeeded: 5,
      failed: 1,
      faultSuccessRate: 0.5,
      // calls x-2 (3 attempts) and x-3 (1) started during the outage
      outageAttemptsPerCall: 2,
      faultAttemptsPerCall: 2,
      errors: { UNAVAILABLE: 1 },
    });
    expect(x?.successRate).toBeCloseTo(5 / 6);
    expect(x?.latency).toMatchObject({ count: 6, p50: 6, p99: 30 });
  });

  it('times the return of the restored replica from the recovery phase start', () => {
    // a was back at 2100; x-5 started at 2600 and took 6 ms on replica a.
    expect(x?.recoveryMs).toBe(506);
    expect(report.clients[1]?.recoveryMs).toBeUndefined();
  });

  it('builds per-second points with load per replica from server records', () => {
    expect(x?.seconds.map((s) => s.offered)).toEqual([2, 2, 2]);
    expect(x?.seconds[1]).toMatchObject({
      t: 1,
      succeeded: 1,
      failed: 1,
      successRate: 0.5,
      p50: 9,
      p99: 30,
      attemptsPerCall: 2,
      load: { b: 4 },
    });
    expect(x?.seconds[2]?.load).toEqual({ a: 1, b: 1 });
    expect(report.replicas).toEqual(['a', 'b', 'c']);
  });

  it('reports per-phase stats and relative phase windows', () => {
    expect(x?.phases.map((p) => [p.phase, p.offered, p.successRate])).toEqual([
      ['healthy', 2, 1],
      ['a down', 2, 0.5],
      ['a back', 2, 1],
    ]);
    expect(report.phases[1]).toEqual({
      name: 'a down',
      kind: 'outage',
      restores: undefined,
      startMs: 1000,
      readyMs: 1000,
      endMs: 2000,
    });
  });

  it('leaves ratios undefined where nothing was offered', () => {
    const empty = analyzeScenario({
      clients: ['z'],
      calls: [],
      attempts: [],
      phases,
      startedAt: 0,
      endedAt: 1500,
    });
    expect(empty.clients[0]).toMatchObject({
      offered: 0,
      successRate: undefined,
      outageAttemptsPerCall: undefined,
    });
    expect(empty.clients[0]?.seconds).toHaveLength(2);
  });
});
