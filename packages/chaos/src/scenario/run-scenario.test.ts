import { createManualClock } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from './analyze.js';
import { runScenario, type ScenarioProgress } from './run-scenario.js';

describe('runScenario', () => {
  it('drives every client at the same open-loop rate through the phases and analyses the run', async () => {
    const clock = createManualClock(10_000);
    let broken = false;
    const attempts: AttemptRecord[] = [];
    const progress: ScenarioProgress[] = [];
    const run = runScenario({
      rate: 10,
      clock,
      sleep: clock.sleep,
      tickMs: 500,
      phases: [
        { name: 'healthy', durationMs: 1_000 },
        {
          name: 'broken',
          durationMs: 1_000,
          kind: 'outage',
          enter: () => {
            broken = true;
          },
        },
      ],
      clients: [
        {
          name: 'fast',
          async call({ callId }) {
            attempts.push({ callId, replica: 'r1' });
            if (broken) throw Object.assign(new Error('down'), { code: 'DOWN' });
            return { replica: 'r1' };
          },
        },
        {
          // Takes 3 s per call: an open loop still offers 10 calls per second.
          name: 'slow',
          async call({ callId }) {
            attempts.push({ callId, replica: 'r2' }, { callId, replica: 'r2' });
            await clock.sleep(3_000);
            return undefined;
          },
        },
      ],
      attempts: () => attempts,
      onProgress: (p) => progress.push(p),
    });
    const { report, loads, calls } = await clock.run(run);
    expect(loads.map((l) => l.started)).toEqual([20, 20]);
    expect(calls).toHaveLength(40);
    const [fast, slow] = report.clients;
    expect(fast).toMatchObject({
      offered: 20,
      succeeded: 10,
      faultSuccessRate: 0,
      outageAttemptsPerCall: 1,
      errors: { DOWN: 10 },
    });
    expect(slow).toMatchObject({ offered: 20, succeeded: 20, outageAttemptsPerCall: 2 });
    expect(slow?.latency.p50).toBe(3_000);
    expect(slow?.seconds.map((s) => s.offered)).toEqual([10, 10]);
    expect(report.phases.map((p) => [p.name, p.startMs, p.endMs])).toEqual([
      ['healthy', 0, 1000],
      ['broken', 1000, 2000],
    ]);
    expect(progress.some((p) => p.phase === 'broken' && p.clients[1]?.inFlight === 10)).toBe(true);
    expect(progress.at(-1)?.clients.map((c) => c.inFlight)).toEqual([0, 0]);
  });

  it('validates its options', async () => {
    await expect(
      runScenario({ rate: 1, phases: [{ name: 'x', durationMs: 1 }], clients: [] }),
    ).rejects.toThrow(/clients/);
    await expect(
      runScenario({
        rate: 0,
        phases: [{ name: 'x', durationMs: 1 }],
        clients: [{ name: 'a', call: async () => undefined }],
      }),
    ).rejects.toThrow(/rate/);
  });
});
