import { describe, expect, it } from 'vitest';
import {
  type CallSample,
  type CellFigures,
  cellFigures,
  goodputSeries,
  type OverloadGoalInput,
  overloadTargets,
  recoveryMs,
  tierFigures,
} from './overload-goals.js';

const call = (
  scheduledAt: number,
  latency: number,
  outcome: CallSample['outcome'] = 'ok',
  tier: CallSample['tier'] = 'default',
  lag = 0,
): CallSample => ({
  scheduledAt,
  startedAt: scheduledAt + lag,
  endedAt: scheduledAt + lag + latency,
  outcome,
  tier,
});

const cell = (offered: number, goodputShare: number, p99: number, refused = 0): CellFigures => ({
  lane: 'adaptive',
  offered,
  goodput: goodputShare * 800,
  goodputShare,
  p50: p99 / 2,
  p99,
  refused,
  wasted: 0,
  lagMs: 0,
});

const passing: OverloadGoalInput = {
  lane: 'adaptive',
  cells: [cell(0.5, 0.5, 14), cell(1, 0.98, 18), cell(1.5, 0.95, 20), cell(3, 0.92, 22)],
  unloadedP99: 12,
  recoveryMs: 400,
  critical: { calls: 900, success: 0.995, refused: 1 },
  sheddable: { calls: 900, success: 0.4, refused: 500 },
};

describe('overload figures (issue 34)', () => {
  it('goodput counts answered calls scheduled in the window; latency and refusals count admitted calls from their start', () => {
    const samples = [
      call(0, 5), // before the window
      call(1_000, 10),
      call(1_100, 30, 'failed', 'default', 20),
      call(1_200, 0, 'refused'),
      call(1_300, 20),
      call(2_000, 5), // after it
    ];
    const f = cellFigures(samples, {
      lane: 'x',
      offered: 1,
      fromMs: 1_000,
      toMs: 2_000,
      capacity: 4,
      server: { served: 4, wasted: 1 },
    });
    expect(f).toMatchObject({
      goodput: 2,
      goodputShare: 0.5,
      refused: 0.25,
      wasted: 0.25,
      lagMs: 20,
    });
    // Admitted: 10, 30, 20 ms (the failed call's 20 ms of start lag is not latency).
    expect([f.p50, f.p99]).toEqual([20, 30]);
  });

  it('buckets goodput by answer time, as calls per second', () => {
    const samples = [call(0, 50), call(0, 150), call(0, 160), call(0, 170, 'failed'), call(0, 250)];
    expect(goodputSeries(samples, 0, 300, 100)).toEqual([10, 20, 10]);
  });

  it('recovery ends with the last bucket below the floor; undefined when the run ends below it', () => {
    const series = [800, 800, 100, 300, 390, 360, 400, 400, 400];
    expect(recoveryMs(series, 2, 100, 360)).toBe(200);
    expect(recoveryMs(series, 2, 100, 365)).toBe(400);
    expect(recoveryMs([800, 400, 400], 1, 100, 360)).toBe(0);
    expect(recoveryMs([800, 400, 100], 1, 100, 360)).toBeUndefined();
    // Averaged over 3 buckets, a lumpy 440 / 320 / 440 is back at once; a real dip still counts.
    expect(recoveryMs([800, 440, 320, 440, 400], 1, 100, 360, 3)).toBe(0);
    expect(recoveryMs([800, 440, 320, 440, 400], 1, 100, 360)).toBe(200);
    expect(recoveryMs([800, 100, 300, 440, 440, 400], 1, 100, 360, 3)).toBe(300);
  });

  it('splits calls by tier', () => {
    const samples = [
      call(0, 5, 'ok', 'critical'),
      call(1, 5, 'refused', 'sheddable'),
      call(2, 5, 'ok', 'sheddable'),
    ];
    expect(tierFigures(samples, 'critical')).toEqual({ calls: 1, success: 1, refused: 0 });
    expect(tierFigures(samples, 'sheddable')).toEqual({ calls: 2, success: 0.5, refused: 1 });
  });
});

describe('overload goal rows (issue 34)', () => {
  it('every goal met', () => {
    expect(overloadTargets(passing).map((t) => t.met)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('each goal can be missed on its own', () => {
    const met = (input: Partial<OverloadGoalInput>) =>
      overloadTargets({ ...passing, ...input }).map((t) => t.met);
    const cells = passing.cells;
    expect(met({ cells: [...cells.slice(0, 3), cell(3, 0.89, 22)] })).toEqual([
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(met({ cells: [...cells.slice(0, 3), cell(3, 0.92, 24.1)] })).toEqual([
      true,
      false,
      true,
      true,
      true,
      true,
    ]);
    expect(met({ recoveryMs: 1_100 })).toEqual([true, true, false, true, true, true]);
    expect(met({ recoveryMs: undefined })).toEqual([true, true, false, true, true, true]);
    expect(met({ cells: [cell(0.5, 0.5, 14, 0.001), ...cells.slice(1)] })).toEqual([
      true,
      true,
      true,
      false,
      true,
      true,
    ]);
    expect(met({ critical: { calls: 900, success: 0.98, refused: 1 } })).toEqual([
      true,
      true,
      true,
      true,
      false,
      true,
    ]);
    expect(met({ critical: { calls: 900, success: 0.995, refused: 10 } })).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it('names the worst load in the p99 row, and says when nothing was refused', () => {
    const rows = overloadTargets({
      ...passing,
      sheddable: { calls: 900, success: 0.5, refused: 0 },
      critical: { calls: 900, success: 1, refused: 0 },
    });
    expect(rows[1]?.figure).toBe('22.0 ms at 3× vs unloaded 12.0 ms');
    expect(rows[5]).toMatchObject({ met: false, note: 'nothing was refused' });
  });
});
