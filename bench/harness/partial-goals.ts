/**
 * The goal rows of issue 30 for one partial-failure scenario: each Breakwater
 * setup answers at least as many calls as the best peer of its protocol minus
 * 0.5 point, with no more server attempts per call than that peer plus 0.1,
 * and a p99 no worse than the best peer p99. Pure, so it is unit-tested.
 */
import type { TargetResult } from './report.js';

/** One lane's figures over a scenario's fault phases. */
export interface LaneFigures {
  lane: string;
  protocol: string;
  peer: boolean;
  successRate: number | undefined;
  attemptsPerCall: number | undefined;
  p50: number | undefined;
  p99: number | undefined;
  p999: number | undefined;
  /** Failed calls no server saw an attempt of. */
  failedUnsent: number;
  failed: number;
  offered: number;
  /** Ms from the restart until the restarted replica answered this lane (restart scenarios). */
  returnMs: number | undefined;
}

/** Success may trail the best peer by this much (a share: 0.005 = 0.5 point). */
export const SUCCESS_SLACK = 0.005;
/** Server attempts per call may exceed the best peer's by this much. */
export const ATTEMPTS_SLACK = 0.1;

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;

/**
 * The best peer of `protocol`: the highest success, and of equals the fewest
 * server attempts per call. Undefined when no peer has figures.
 */
export function bestPeer(rows: readonly LaneFigures[], protocol: string): LaneFigures | undefined {
  let best: LaneFigures | undefined;
  for (const r of rows) {
    if (!r.peer || r.protocol !== protocol || r.successRate === undefined) continue;
    const better =
      !best ||
      r.successRate > (best.successRate ?? 0) ||
      (r.successRate === best.successRate &&
        (r.attemptsPerCall ?? Infinity) < (best.attemptsPerCall ?? Infinity));
    if (better) best = r;
  }
  return best;
}

/** The goal rows of one scenario: three per Breakwater lane (success, attempts, p99). */
export function partialTargets(scenario: string, rows: readonly LaneFigures[]): TargetResult[] {
  const out: TargetResult[] = [];
  for (const bw of rows.filter((r) => !r.peer)) {
    const best = bestPeer(rows, bw.protocol);
    if (!best || best.successRate === undefined || bw.successRate === undefined) continue;
    const floor = best.successRate - SUCCESS_SLACK;
    const successMet = bw.successRate >= floor - 1e-9;
    out.push({
      target: `${scenario}: ${bw.lane} success ≥ best peer − 0.5 pt`,
      figure: `${pct(bw.successRate)} vs ${best.lane} ${pct(best.successRate)}`,
      met: successMet,
      ...(successMet
        ? {}
        : { note: `${bw.failed} failed, ${bw.failedUnsent} of them never reached a server` }),
    });
    if (bw.attemptsPerCall !== undefined && best.attemptsPerCall !== undefined) {
      const met = bw.attemptsPerCall <= best.attemptsPerCall + ATTEMPTS_SLACK + 1e-9;
      out.push({
        target: `${scenario}: ${bw.lane} server attempts per call ≤ best peer + 0.1`,
        figure: `${bw.attemptsPerCall.toFixed(2)} vs ${best.attemptsPerCall.toFixed(2)}`,
        met,
      });
    }
    const fastest = Math.min(
      ...rows
        .filter((r) => r.peer && r.protocol === bw.protocol && r.p99 !== undefined)
        .map((r) => r.p99 as number),
    );
    if (bw.p99 !== undefined && Number.isFinite(fastest)) {
      out.push({
        target: `${scenario}: ${bw.lane} p99 ≤ best peer p99`,
        figure: `${Math.round(bw.p99)} ms vs ${Math.round(fastest)} ms`,
        met: bw.p99 <= fastest,
      });
    }
  }
  return out;
}
