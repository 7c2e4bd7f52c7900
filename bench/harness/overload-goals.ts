/**
 * The figures and goal rows of the `overload` suite (issue 34), from the calls
 * a lane made: goodput (calls answered within their deadline, per second),
 * latency of the calls its limiter let through, refusals, a goodput time
 * series around a capacity change, and the split between criticality tiers.
 * Pure, so it is unit-tested.
 */

import { summarizeLatency as latencySummary } from '@breakwater/chaos';
import type { TargetResult } from './report.js';

/** A call's criticality, as the adaptive limit names it. */
export type Tier = 'critical' | 'default' | 'sheddable';

/** How a call ended: answered, refused by the client's own limiter, or failed (deadline, server refusal). */
export type CallOutcome = 'ok' | 'refused' | 'failed';

/** One call of a run. */
export interface CallSample {
  /** When the open-loop schedule wanted it to start (ms, any origin). */
  scheduledAt: number;
  /** When it started (same origin): latency counts from here; later than `scheduledAt` only when the client process fell behind. */
  startedAt: number;
  /** When it settled (same origin). */
  endedAt: number;
  outcome: CallOutcome;
  tier: Tier;
}

/** One lane at one offered load. */
export interface CellFigures {
  lane: string;
  /** Offered load as a multiple of the server's capacity. */
  offered: number;
  /** Calls answered per second. */
  goodput: number;
  /** `goodput` as a share of the server's capacity. */
  goodputShare: number;
  /** Latency of the calls the client's limiter admitted (answered or not), ms. */
  p50: number | undefined;
  p99: number | undefined;
  /** Share of calls the client's limiter refused. */
  refused: number;
  /** Share of the server's served calls whose client had already given up. */
  wasted: number | undefined;
  /** Most a call started after its scheduled time, ms: how far the client process fell behind. */
  lagMs: number;
}

/** Figures of `samples` scheduled in `[fromMs, toMs)`. */
export function cellFigures(
  samples: readonly CallSample[],
  cell: {
    lane: string;
    offered: number;
    fromMs: number;
    toMs: number;
    /** Calls per second the server can serve. */
    capacity: number;
    /** What the server counted over the run: calls served, and of those served for nobody. */
    server: { served: number; wasted: number };
  },
): CellFigures {
  const inWindow = samples.filter((s) => s.scheduledAt >= cell.fromMs && s.scheduledAt < cell.toMs);
  const admitted = inWindow.filter((s) => s.outcome !== 'refused');
  const latency = latencySummary(admitted.map((s) => s.endedAt - s.startedAt));
  const goodput =
    inWindow.filter((s) => s.outcome === 'ok').length / ((cell.toMs - cell.fromMs) / 1000);
  return {
    lane: cell.lane,
    offered: cell.offered,
    goodput,
    goodputShare: goodput / cell.capacity,
    p50: latency.p50,
    p99: latency.p99,
    refused: inWindow.length === 0 ? 0 : (inWindow.length - admitted.length) / inWindow.length,
    wasted: cell.server.served === 0 ? undefined : cell.server.wasted / cell.server.served,
    lagMs: inWindow.reduce((most, s) => Math.max(most, s.startedAt - s.scheduledAt), 0),
  };
}

/**
 * Goodput per bucket (calls/s), by the time calls were answered: bucket `i`
 * covers `[startMs + i × bucketMs, startMs + (i + 1) × bucketMs)`.
 */
export function goodputSeries(
  samples: readonly CallSample[],
  startMs: number,
  endMs: number,
  bucketMs: number,
): number[] {
  const buckets = new Array<number>(Math.ceil((endMs - startMs) / bucketMs)).fill(0);
  for (const s of samples) {
    if (s.outcome !== 'ok' || s.endedAt < startMs || s.endedAt >= endMs) continue;
    const i = Math.floor((s.endedAt - startMs) / bucketMs);
    buckets[i] = (buckets[i] ?? 0) + 1;
  }
  return buckets.map((n) => n / (bucketMs / 1000));
}

/**
 * Ms from a change (the start of bucket `changeIndex`) until goodput is back
 * at or above `floor` for good: the end of the last bucket whose goodput,
 * averaged over it and up to `window − 1` buckets before it (none before the
 * change), is below `floor`; 0 when none is, `undefined` when the last one
 * still is. The average keeps a saturated server's lumpy completions (a
 * bucket holds whole calls) from reading as a dip.
 */
export function recoveryMs(
  series: readonly number[],
  changeIndex: number,
  bucketMs: number,
  floor: number,
  window = 1,
): number | undefined {
  let lastBelow = changeIndex - 1;
  for (let i = changeIndex; i < series.length; i++) {
    const from = Math.max(changeIndex, i - window + 1);
    const part = series.slice(from, i + 1);
    if (part.reduce((a, b) => a + b, 0) / part.length < floor) lastBelow = i;
  }
  if (lastBelow === series.length - 1) return undefined;
  return (lastBelow + 1 - changeIndex) * bucketMs;
}

/** How one tier fared. */
export interface TierFigures {
  calls: number;
  /** Share answered. */
  success: number;
  /** Calls the client's limiter refused. */
  refused: number;
}

/** The calls of `tier` in `samples`. */
export function tierFigures(samples: readonly CallSample[], tier: Tier): TierFigures {
  const mine = samples.filter((s) => s.tier === tier);
  const ok = mine.filter((s) => s.outcome === 'ok').length;
  return {
    calls: mine.length,
    success: mine.length === 0 ? 0 : ok / mine.length,
    refused: mine.filter((s) => s.outcome === 'refused').length,
  };
}

/** Goal thresholds of issue 34. */
export const GOALS = {
  /** Goodput at 3× offered, as a share of capacity. */
  goodputAtOverload: 0.9,
  /** Admitted p99 at most this multiple of the unloaded p99. */
  p99Factor: 2,
  /** After capacity halves, goodput back at this share of the new capacity… */
  recoveryShare: 0.9,
  /** …within this many ms. */
  recoveryMs: 1_000,
  /** Success of critical calls when two tiers share 1.5× capacity. */
  criticalSuccess: 0.99,
  /** Share of the refusals that fall on sheddable calls. */
  sheddableShareOfRefusals: 0.99,
} as const;

/** What the goal rows are checked on: the adaptive lane's figures. */
export interface OverloadGoalInput {
  lane: string;
  /** The lane's cells, one per offered load. */
  cells: readonly CellFigures[];
  /** p99 of calls without any load to speak of (no limit, 0.5×), ms. */
  unloadedP99: number | undefined;
  /** Ms until goodput was back after capacity halved (`undefined`: not within the run). */
  recoveryMs: number | undefined;
  critical: TierFigures;
  sheddable: TierFigures;
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

/** The goal rows of issue 34 for one lane. */
export function overloadTargets(input: OverloadGoalInput): TargetResult[] {
  const { lane } = input;
  const out: TargetResult[] = [];
  const at = (offered: number) => input.cells.find((c) => c.offered === offered);
  const top = at(3);
  if (top) {
    out.push({
      target: `overload: ${lane} goodput at 3× offered ≥ ${pct(GOALS.goodputAtOverload)} of capacity`,
      figure: pct(top.goodputShare),
      met: top.goodputShare >= GOALS.goodputAtOverload,
    });
  }
  const worst = input.cells
    .filter((c) => c.p99 !== undefined)
    .reduce<CellFigures | undefined>((w, c) => ((c.p99 ?? 0) > (w?.p99 ?? -1) ? c : w), undefined);
  if (worst?.p99 !== undefined && input.unloadedP99 !== undefined) {
    const met = worst.p99 <= GOALS.p99Factor * input.unloadedP99;
    out.push({
      target: `overload: ${lane} admitted p99 ≤ ${GOALS.p99Factor}× the unloaded p99 at every load`,
      figure: `${worst.p99.toFixed(1)} ms at ${worst.offered}× vs unloaded ${input.unloadedP99.toFixed(1)} ms`,
      met,
    });
  }
  out.push({
    target: `overload: ${lane} goodput back to ≥ ${pct(GOALS.recoveryShare)} of the new capacity within ${GOALS.recoveryMs / 1000} s of it halving`,
    figure: input.recoveryMs === undefined ? 'not back within the run' : `${input.recoveryMs} ms`,
    met: input.recoveryMs !== undefined && input.recoveryMs <= GOALS.recoveryMs,
  });
  const half = at(0.5);
  if (half) {
    out.push({
      target: `overload: ${lane} refuses nothing at 0.5× offered`,
      figure: pct(half.refused),
      met: half.refused === 0,
    });
  }
  out.push({
    target: `overload: ${lane} critical calls ≥ ${pct(GOALS.criticalSuccess)} success with sheddable ones at 1.5× capacity`,
    figure: `${pct(input.critical.success)} of ${input.critical.calls}`,
    met: input.critical.calls > 0 && input.critical.success >= GOALS.criticalSuccess,
  });
  const refusals = input.critical.refused + input.sheddable.refused;
  const share = refusals === 0 ? 0 : input.sheddable.refused / refusals;
  out.push({
    target: `overload: ${lane} sheddable calls take ≥ ${pct(GOALS.sheddableShareOfRefusals)} of the refusals`,
    figure: `${input.sheddable.refused} of ${refusals} refusals`,
    met: refusals > 0 && share >= GOALS.sheddableShareOfRefusals,
    ...(refusals === 0 ? { note: 'nothing was refused' } : {}),
  });
  return out;
}
