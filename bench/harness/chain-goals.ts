/**
 * The goal rows of issue 33 for the `chain` suite, from each scenario's
 * figures (harness/chain-figures.ts). Pure, so it is unit-tested.
 */
import type { ChainFigures, Hop } from './chain-figures.js';
import type { TargetResult } from './report.js';

/** The scenarios the goals name; the suite runs exactly these. */
export const CHAIN_SCENARIOS = {
  failAll: 'D fails every call',
  fail30: 'D fails 30% of calls',
  hangDeadline: 'D hangs, root deadline',
  hangCancel: 'D hangs, root caller cancels',
} as const;

/** What three layers of three attempts send to a leaf that always fails. */
export const PEER_ATTEMPTS_AT_D = 27;
/** Breakwater's attempts at D per root request from the first request on, at most. */
export const FIRST_SECOND_MAX = 3;
/** …and once its budgets are warm. */
export const WARM_MAX = 1.2;
/** Every call below A stops within this many ms of A's caller giving up. */
export const CANCEL_MAX_MS = 20;
/** Each hop's deadline is within this many ms of the root's minus the margins. */
export const DEADLINE_TOLERANCE_MS = 5;

const EPS = 1e-9;
const f2 = (v: number | undefined) => (v === undefined ? '–' : v.toFixed(2));
const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);
const ms = (v: number | undefined) =>
  v === undefined ? '–' : Number.isFinite(v) ? `${Math.round(v)} ms` : 'never';

const DOWNSTREAM: readonly Hop[] = ['B', 'C', 'D'];

const signed = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}`;

/**
 * "B +0.4 / +3.1 · C … · D none": each hop below A, its median and worst
 * signed deadline error (ms), and how many of its attempts came without one.
 */
export function deadlineErrorText(f: ChainFigures): string {
  return DOWNSTREAM.map((hop) => {
    const e = f.deadlineError[hop];
    if (e.worstMs === undefined || e.medianMs === undefined) {
      return `${hop} ${e.missing > 0 ? 'none' : '–'}`;
    }
    const missing = e.missing > 0 ? ` (${e.missing} none)` : '';
    return `${hop} ${signed(e.medianMs)} / ${signed(e.worstMs)}${missing}`;
  }).join(' · ');
}

function failAllTargets(rows: readonly ChainFigures[]): TargetResult[] {
  return rows.map((f) => {
    if (!f.breakwater) {
      const met =
        f.attemptsAtDAll === undefined
          ? null
          : Math.abs(f.attemptsAtDAll - PEER_ATTEMPTS_AT_D) < 0.5;
      return {
        target: `${CHAIN_SCENARIOS.failAll}: ${f.stack} sends ${PEER_ATTEMPTS_AT_D} attempts to D per root request (3 per hop)`,
        figure: f2(f.attemptsAtDAll),
        met,
      };
    }
    const first = f.attemptsAtDFirstSecond;
    const warm = f.attemptsAtDWarm;
    const met =
      first === undefined || warm === undefined
        ? null
        : first <= FIRST_SECOND_MAX + EPS && warm <= WARM_MAX + EPS;
    return {
      target: `${CHAIN_SCENARIOS.failAll}: ${f.stack} attempts at D per root request ≤ ${FIRST_SECOND_MAX} in the first second, ≤ ${WARM_MAX} warm`,
      figure: `${f2(first)} / ${f2(warm)}`,
      met,
    };
  });
}

function fail30Targets(rows: readonly ChainFigures[]): TargetResult[] {
  const out: TargetResult[] = [];
  for (const bw of rows.filter((r) => r.breakwater)) {
    for (const peer of rows.filter((r) => !r.breakwater)) {
      const measured =
        bw.rootSuccess !== undefined &&
        peer.rootSuccess !== undefined &&
        bw.attemptsAtDAll !== undefined &&
        peer.attemptsAtDAll !== undefined;
      out.push({
        target: `${CHAIN_SCENARIOS.fail30}: ${bw.stack} root success ≥ ${peer.stack}'s, attempts at D per root request ≤ its`,
        figure: `${pct(bw.rootSuccess)} vs ${pct(peer.rootSuccess)}; ${f2(bw.attemptsAtDAll)} vs ${f2(peer.attemptsAtDAll)}`,
        met: measured
          ? (bw.rootSuccess as number) >= (peer.rootSuccess as number) - EPS &&
            (bw.attemptsAtDAll as number) <= (peer.attemptsAtDAll as number) + EPS
          : null,
      });
    }
  }
  return out;
}

function hangTargets(scenario: string, rows: readonly ChainFigures[]): TargetResult[] {
  return rows
    .filter((r) => r.breakwater)
    .map((f) => {
      const cancelMet = f.cancelMaxMs === undefined || f.cancelMaxMs <= CANCEL_MAX_MS + EPS;
      return {
        target: `${scenario}: ${f.stack} sends no call to C or D after the root gave up, and stops every call below A within ${CANCEL_MAX_MS} ms`,
        figure: `${f.lateCalls} late; max ${ms(f.cancelMaxMs)} over ${f.cancelCalls} calls`,
        met: f.roots === 0 ? null : f.lateCalls === 0 && cancelMet,
      };
    });
}

function deadlineTargets(rows: readonly ChainFigures[]): TargetResult[] {
  return rows
    .filter((r) => r.breakwater)
    .map((f) => {
      const errors = DOWNSTREAM.map((hop) => f.deadlineError[hop]);
      const seen = errors.some((e) => e.worstMs !== undefined);
      const met = errors.every(
        (e) =>
          e.missing === 0 &&
          (e.worstMs === undefined || Math.abs(e.worstMs) <= DEADLINE_TOLERANCE_MS + EPS),
      );
      return {
        target: `${f.scenario}: ${f.stack} deadline at each hop = the root's − margin per hop (±${DEADLINE_TOLERANCE_MS} ms)`,
        figure: deadlineErrorText(f),
        met: seen ? met : null,
      };
    });
}

/** Every goal row of the suite, from every scenario's figures. */
export function chainTargets(rows: readonly ChainFigures[]): TargetResult[] {
  const of = (scenario: string) => rows.filter((r) => r.scenario === scenario);
  return [
    ...failAllTargets(of(CHAIN_SCENARIOS.failAll)),
    ...fail30Targets(of(CHAIN_SCENARIOS.fail30)),
    ...hangTargets(CHAIN_SCENARIOS.hangDeadline, of(CHAIN_SCENARIOS.hangDeadline)),
    ...hangTargets(CHAIN_SCENARIOS.hangCancel, of(CHAIN_SCENARIOS.hangCancel)),
    ...deadlineTargets(of(CHAIN_SCENARIOS.hangDeadline)),
  ];
}
