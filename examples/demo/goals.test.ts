import type { ScenarioReport } from '@breakwater/chaos';
import { describe, expect, it } from 'vitest';
import { checkGoals } from './src/goals.js';
import { wrapLabelled } from './src/table.js';

interface Lane {
  /** Success per phase, in [0, 1]. */
  phases: number[];
  run: number;
  p99: number;
  /** Server attempts per call per phase (defaults to 1). */
  load?: number[];
}

/** The numbers checkGoals reads, for one protocol's lanes over phases named p0, p1, …. */
function report(lanes: Record<string, Lane>): ScenarioReport {
  return {
    clients: Object.entries(lanes).map(([client, l]) => ({
      client,
      successRate: l.run,
      latency: { p99: l.p99 },
      phases: l.phases.map((successRate, i) => ({
        phase: `p${i}`,
        successRate,
        attemptsPerCall: l.load?.[i] ?? 1,
        latency: { p99: l.p99 },
      })),
    })),
  } as unknown as ScenarioReport;
}

const peers = (phases: number[], p99 = 40): Record<string, Lane> => ({
  'grpc/usual': { phases, run: 1, p99 },
  'grpc/hedging': { phases: phases.map((p) => p * 0.9), run: 0.99, p99: 33 },
});

describe('checkGoals (issue 30: Breakwater against the best other client of its protocol)', () => {
  it('a phase within 0.5 point of the best other client passes; beyond it, it is a loss line', () => {
    const near = checkGoals(
      report({ ...peers([1, 1]), 'grpc/breakwater': { phases: [1, 0.996], run: 1, p99: 30 } }),
      'grpc',
    );
    expect(near?.met).toBe(true);
    expect(near?.summary).toMatch(/^Breakwater met every goal: .*closest −0\.4 pt, “p1”/);
    const far = checkGoals(
      report({ ...peers([1, 1]), 'grpc/breakwater': { phases: [1, 0.994], run: 1, p99: 30 } }),
      'grpc',
      () => '3 of its 3 failures never reached a server (3 × UNAVAILABLE)',
    );
    expect(far?.met).toBe(false);
    expect(far?.losses).toEqual([
      '“p1”: 99.4% vs usual 100.0% (−0.6 pt); 3 of its 3 failures never reached a server (3 × UNAVAILABLE).',
    ]);
    // A loss is explained in at most two lines of an 80-column terminal.
    for (const loss of far?.losses ?? []) {
      expect(wrapLabelled('grpc:', loss, 5, 80).length).toBeLessThanOrEqual(2);
    }
  });

  it('the whole run within 0.2 point passes; beyond it, it is a loss', () => {
    const lane = (run: number) =>
      checkGoals(
        report({ ...peers([1]), 'grpc/breakwater': { phases: [1], run, p99: 30 } }),
        'grpc',
      );
    expect(lane(0.9985)?.met).toBe(true);
    expect(lane(0.997)?.losses).toEqual([
      'Whole run: 99.7% vs usual 100.0% (−0.3 pt; limit −0.2 pt).',
    ]);
  });

  it('a whole run lost on the full outage says the peer retried into the recovery at its load, in two lines', () => {
    const verdict = checkGoals(
      report({
        'grpc/usual': { phases: [1, 0.05, 1], run: 0.512, p99: 364, load: [1, 2.99, 1] },
        'grpc/none': { phases: [1, 0, 1], run: 0.5, p99: 14 },
        'grpc/breakwater': { phases: [1, 0, 1], run: 0.5, p99: 15, load: [1, 0.17, 1] },
      }),
      'grpc',
    );
    expect(verdict?.losses).toEqual([
      'Whole run: 50.0% vs usual 51.2% (−1.2 pt; limit −0.2 pt): usual retried outage calls into the recovery: 2.99 attempts/call vs 0.17.',
    ]);
    for (const loss of verdict?.losses ?? []) {
      expect(wrapLabelled('grpc:', loss, 5, 80).length).toBeLessThanOrEqual(2);
    }
  });

  it('another Breakwater lane (breakwater-adaptive) is not one of the clients Breakwater is measured against', () => {
    const verdict = checkGoals(
      report({
        ...peers([1]),
        'grpc/breakwater': { phases: [1], run: 1, p99: 45 },
        'grpc/breakwater-adaptive': { phases: [1], run: 1, p99: 10 },
      }),
      'grpc',
    );
    // Against hedging's 33 ms the limit is 49.6 ms; against the adaptive lane's 10 ms it would be 22 ms.
    expect(verdict?.met).toBe(true);
    expect(verdict?.summary).toMatch(/p99 45 ≤ 50 ms/);
  });

  it('p99 at most 1.2 × the best other p99 + 10 ms (the best is the lowest)', () => {
    const lane = (p99: number) =>
      checkGoals(
        report({ ...peers([1]), 'grpc/breakwater': { phases: [1], run: 1, p99 } }),
        'grpc',
      );
    // Best other p99 is hedging's 33 ms: limit 49.6 ms.
    expect(lane(49)?.met).toBe(true);
    expect(lane(50)?.losses[0]).toMatch(
      /^p99 50 ms vs hedging 33 ms \(limit 50 ms\); worst in “p0”/,
    );
  });

  it('in a full outage (no client answers 10%) shedding is the measure: ≤ 0.3 attempts per call', () => {
    const outage = (load: number, peerSuccess: number) =>
      checkGoals(
        report({
          ...peers([1, peerSuccess]),
          'grpc/breakwater': { phases: [1, 0], run: 1, p99: 30, load: [1, load] },
        }),
        'grpc',
      );
    expect(outage(0.25, 0.05)?.met).toBe(true);
    expect(outage(0.25, 0.05)?.summary).toContain('full outage 0.25 ≤ 0.3 attempts/call');
    expect(outage(0.35, 0.05)?.losses).toEqual([
      '“p1” (full outage): 0.35 server attempts per call, limit 0.30.',
    ]);
    // One peer answers half its calls: not a full outage, so success is compared.
    expect(outage(0.25, 0.5)?.losses[0]).toMatch(/^“p1”: 0\.0% vs usual 50\.0% \(−50\.0 pt\)\.$/);
  });
});
