/**
 * The "Must show" rows of issue 30, checked on one run: Breakwater against the
 * best other client of its protocol. Pure: every number comes from the report.
 */
import type { ClientReport, ScenarioReport } from '@breakwater/chaos';

/** The limits Breakwater has to meet against the best other client of its protocol. */
export const GOALS = {
  /** In every phase: success ≥ the best other client's − this (a share, 0.005 = 0.5 point). */
  phaseSuccessSlack: 0.005,
  /** Over the whole run: success ≥ the best other client's − this. */
  runSuccessSlack: 0.002,
  /** p99 over the run ≤ this × the best other client's p99 + `p99SlackMs`. */
  p99Factor: 1.2,
  p99SlackMs: 10,
  /** A phase where no client answers this share of its calls is a full outage: shedding is the measure. */
  fullOutageSuccess: 0.1,
  /** In a full outage: at most this many server attempts per call. */
  outageAttemptsPerCall: 0.3,
} as const;

/** The outcome of the goal checks for one protocol. */
export interface GoalVerdict {
  /** Whether Breakwater met every goal. */
  met: boolean;
  /** One line: the goals met, with the closest margins; or how many checks failed. */
  summary: string;
  /** One short line per failed check (a phase, the run's success, the p99, an outage's load). */
  losses: string[];
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const pt = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v * 100).toFixed(1)} pt`;
const flavour = (client: string) => client.split('/')[1] ?? client;

/** Whether phase `i` is a full outage: no client of `clients` answered `GOALS.fullOutageSuccess` of its calls. */
export function isFullOutage(clients: readonly ClientReport[], i: number): boolean {
  return clients.every((c) => (c.phases[i]?.successRate ?? 0) < GOALS.fullOutageSuccess);
}

/** The other client with the highest value of `of`, among those that have one. */
function bestBy(
  others: readonly ClientReport[],
  of: (c: ClientReport) => number | undefined,
  lowest = false,
): { client: ClientReport; value: number } | undefined {
  let best: { client: ClientReport; value: number } | undefined;
  for (const client of others) {
    const value = of(client);
    if (value === undefined) continue;
    if (!best || (lowest ? value < best.value : value > best.value)) best = { client, value };
  }
  return best;
}

/**
 * Checks the goals for `protocol`'s Breakwater lane (`<protocol>/breakwater`);
 * `why(i)` explains a phase's failures in a few words (e.g. how many never
 * reached a server). Undefined when the protocol has no Breakwater lane.
 */
export function checkGoals(
  report: ScenarioReport,
  protocol: string,
  why: (phaseIndex: number) => string = () => '',
): GoalVerdict | undefined {
  const clients = report.clients.filter((c) => c.client.startsWith(`${protocol}/`));
  const bw = clients.find((c) => flavour(c.client) === 'breakwater');
  if (!bw) return undefined;
  // Measured against the other kinds of client, not another Breakwater configuration (`breakwater-adaptive`).
  const others = clients.filter((c) => !flavour(c.client).startsWith('breakwater'));
  const losses: string[] = [];
  let closest: { margin: number; phase: string } | undefined;
  const outageLoads: number[] = [];
  for (const [i, phase] of bw.phases.entries()) {
    if (phase.successRate === undefined) continue;
    if (isFullOutage(clients, i)) {
      const load = phase.attemptsPerCall ?? 0;
      outageLoads.push(load);
      if (load > GOALS.outageAttemptsPerCall) {
        losses.push(
          `“${phase.phase}” (full outage): ${load.toFixed(2)} server attempts per call, limit ${GOALS.outageAttemptsPerCall.toFixed(2)}.`,
        );
      }
      continue;
    }
    const best = bestBy(others, (c) => c.phases[i]?.successRate);
    if (!best) continue;
    const margin = phase.successRate - best.value;
    if (margin < -GOALS.phaseSuccessSlack) {
      const reason = why(i);
      losses.push(
        `“${phase.phase}”: ${pct(phase.successRate)} vs ${flavour(best.client.client)} ${pct(best.value)} (${pt(margin)})${reason === '' ? '.' : `; ${reason}.`}`,
      );
    } else if (!closest || margin < closest.margin) {
      closest = { margin, phase: phase.phase };
    }
  }
  const run = bestBy(others, (c) => c.successRate);
  const runOk =
    !run || bw.successRate === undefined || bw.successRate >= run.value - GOALS.runSuccessSlack;
  if (!runOk && run && bw.successRate !== undefined) {
    losses.push(
      `Whole run: ${pct(bw.successRate)} vs ${flavour(run.client.client)} ${pct(run.value)} (${pt(bw.successRate - run.value)}; limit −0.2 pt)${outageGap(clients, bw, run.client)}.`,
    );
  }
  const fast = bestBy(others, (c) => c.latency.p99, true);
  const p99 = bw.latency.p99;
  const p99Limit = fast ? fast.value * GOALS.p99Factor + GOALS.p99SlackMs : undefined;
  if (p99 !== undefined && p99Limit !== undefined && fast && p99 > p99Limit) {
    losses.push(
      `p99 ${Math.round(p99)} ms vs ${flavour(fast.client.client)} ${Math.round(fast.value)} ms (limit ${Math.round(p99Limit)} ms)${worstPhase(bw)}.`,
    );
  }
  if (losses.length > 0) {
    return {
      met: false,
      summary: `Breakwater missed ${losses.length} goal${losses.length === 1 ? '' : 's'}:`,
      losses,
    };
  }
  const parts = [
    closest
      ? `every phase ≥ best − 0.5 pt (closest ${pt(closest.margin)}, “${closest.phase}”)`
      : '',
    run && bw.successRate !== undefined ? `run ${pct(bw.successRate)} vs ${pct(run.value)}` : '',
    p99 !== undefined && p99Limit !== undefined
      ? `p99 ${Math.round(p99)} ≤ ${Math.round(p99Limit)} ms`
      : '',
    outageLoads.length > 0
      ? `full outage ${Math.max(...outageLoads).toFixed(2)} ≤ ${GOALS.outageAttemptsPerCall} attempts/call`
      : '',
  ].filter((p) => p !== '');
  return { met: true, summary: `Breakwater met every goal: ${parts.join(', ')}.`, losses: [] };
}

/**
 * Why a whole run was lost when the gap is the full outage's calls: the peer
 * answered more of them by retrying into the recovery, at several server
 * attempts per call, where Breakwater refused them at once. Nothing otherwise.
 */
function outageGap(clients: readonly ClientReport[], bw: ClientReport, peer: ClientReport): string {
  let gained = false;
  let peerLoad = 0;
  let ownLoad = 0;
  for (const [i, phase] of bw.phases.entries()) {
    if (!isFullOutage(clients, i)) continue;
    const theirs = peer.phases[i];
    if ((theirs?.successRate ?? 0) > (phase.successRate ?? 0)) gained = true;
    peerLoad = Math.max(peerLoad, theirs?.attemptsPerCall ?? 0);
    ownLoad = Math.max(ownLoad, phase.attemptsPerCall ?? 0);
  }
  if (!gained) return '';
  return `: ${flavour(peer.client)} retried outage calls into the recovery: ${peerLoad.toFixed(2)} attempts/call vs ${ownLoad.toFixed(2)}`;
}

/** "; worst in “B long tail” (612 ms)", or nothing when no phase has a p99. */
function worstPhase(c: ClientReport): string {
  let worst: { phase: string; p99: number } | undefined;
  for (const p of c.phases) {
    const p99 = p.latency.p99;
    if (p99 !== undefined && (!worst || p99 > worst.p99)) worst = { phase: p.phase, p99 };
  }
  return worst ? `; worst in “${worst.phase}” (${Math.round(worst.p99)} ms)` : '';
}
