/**
 * What a run shows, in sentences computed from its numbers: whether Breakwater
 * met the goals against the best other client of its protocol (one line) or
 * where it missed them (one short line each, with the measured evidence), how
 * each client came back after a recovery, and one line under each chart.
 * Nothing here is a claim written in advance: every number comes from the run.
 */
import type { AttemptRecord, CallRecord, ClientReport, ScenarioReport } from '@breakwater/chaos';
import { checkGoals } from './goals.js';

/** How one client came back in one recovery phase. */
export interface RecoveryRow {
  client: string;
  phase: string;
  /** Ms from the phase being ready until the client's first success that ended after it. */
  firstSuccessMs: number | undefined;
  /** Ms until a restored replica answered this client (phases that restore replicas). */
  restoredMs: number | undefined;
  /** Success rate of calls started in the first 2 s of the phase. */
  first2s: number | undefined;
  /** Whether the phase restores replicas (so `restoredMs` undefined means "not seen"). */
  restores: boolean;
}

/** Computed sentences for one protocol's section of the report. */
export interface ProtocolFindings {
  protocol: string;
  /** One line: Breakwater met every goal (with its closest margins), or how many it missed. */
  verdict: string;
  /** Each goal Breakwater missed, in one short line with the numbers and the evidence. */
  losses: string[];
  /** How Breakwater came back after each recovery phase against the others, and why, whether or not it lost. */
  comeback: string[];
  /** One computed line under each chart. */
  charts: { success: string; latency: string; load: string };
}

/** Everything computed for the report and the terminal. */
export interface Findings {
  protocols: ProtocolFindings[];
  recovery: RecoveryRow[];
}

const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)}%`);
const ms = (v: number | undefined) => (v === undefined ? '–' : `${Math.round(v)} ms`);
const flavour = (client: string) => client.split('/')[1] ?? client;
const protocolOf = (client: string) => client.split('/')[0] ?? client;

/** Attempts per call over the whole run, from the per-phase numbers. */
function attemptsPerCall(c: ClientReport): number | undefined {
  let attempts = 0;
  let calls = 0;
  for (const p of c.phases) {
    if (p.attemptsPerCall === undefined) continue;
    attempts += p.attemptsPerCall * p.offered;
    calls += p.offered;
  }
  return calls === 0 ? undefined : attempts / calls;
}

/** Server-side attempts per call id. */
function attemptCounts(attempts: readonly AttemptRecord[]): Map<string, number> {
  const count = new Map<string, number>();
  for (const a of attempts) count.set(a.callId, (count.get(a.callId) ?? 0) + (a.count ?? 1));
  return count;
}

function topErrors(calls: readonly CallRecord[]): string {
  const counts = new Map<string, number>();
  for (const c of calls)
    if (!c.ok) counts.set(c.error ?? 'error', (counts.get(c.error ?? 'error') ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 2)
    .map(([code, n]) => `${n} × ${code}`)
    .join(', ');
}

/** Computes the report's findings from the analysed report, the raw calls and the servers' attempts. */
export function computeFindings(
  report: ScenarioReport,
  calls: readonly CallRecord[],
  attempts: readonly AttemptRecord[],
): Findings {
  const sent = attemptCounts(attempts);
  const byClient = new Map<string, CallRecord[]>();
  for (const c of calls) {
    let list = byClient.get(c.client);
    if (!list) {
      list = [];
      byClient.set(c.client, list);
    }
    list.push(c);
  }
  const windowCalls = (client: string, fromMs: number, toMs: number) =>
    (byClient.get(client) ?? []).filter(
      (c) => c.startedAt >= report.startedAt + fromMs && c.startedAt < report.startedAt + toMs,
    );

  const recovery: RecoveryRow[] = [];
  for (const phase of report.phases.filter((p) => p.kind === 'recovery')) {
    const ready = report.startedAt + phase.readyMs;
    for (const c of report.clients) {
      const own = byClient.get(c.client) ?? [];
      let first: number | undefined;
      for (const call of own) {
        const end = call.startedAt + call.latencyMs;
        if (call.ok && end >= ready && (first === undefined || end < first)) first = end;
      }
      const early = windowCalls(c.client, phase.readyMs, phase.readyMs + 2_000);
      recovery.push({
        client: c.client,
        phase: phase.name,
        firstSuccessMs: first === undefined ? undefined : first - ready,
        restoredMs: phase.restores === undefined ? undefined : c.recoveryMs,
        first2s: early.length === 0 ? undefined : early.filter((x) => x.ok).length / early.length,
        restores: phase.restores !== undefined,
      });
    }
  }

  const protocols = [...new Set(report.clients.map((c) => protocolOf(c.client)))].map(
    (protocol): ProtocolFindings => {
      const clients = report.clients.filter((c) => protocolOf(c.client) === protocol);
      const bw = clients.find((c) => flavour(c.client) === 'breakwater');
      const comeback: string[] = [];
      const verdict = checkGoals(report, protocol, (i) => {
        const window = report.phases[i];
        if (!bw || !window) return '';
        const failed = windowCalls(bw.client, window.startMs, window.endMs).filter((c) => !c.ok);
        const unsent = failed.filter((c) => (sent.get(c.callId) ?? 0) === 0).length;
        return `${unsent} of its ${failed.length} failures never reached a server (${topErrors(failed)})`;
      });
      if (bw) {
        // Every recovery, won or lost: each client's time back.
        for (const row of recovery.filter((r) => r.client === bw.client)) {
          const all = recovery.filter(
            (r) => r.phase === row.phase && protocolOf(r.client) === protocol,
          );
          const key = row.restores ? 'restoredMs' : 'firstSuccessMs';
          const mine = row[key];
          // Within TIE_MS is a tie: which client's next call started first, not how it recovers.
          const faster = all.filter((r) => {
            const t = r[key];
            return t !== undefined && (mine === undefined || t < mine - TIE_MS);
          }).length;
          const level = all.filter((r) => {
            const t = r[key];
            return (
              r !== row && t !== undefined && mine !== undefined && Math.abs(t - mine) <= TIE_MS
            );
          }).length;
          const place =
            mine === undefined
              ? 'not back'
              : faster === 0
                ? level === 0
                  ? 'first'
                  : 'level with the fastest'
                : faster === all.length - 1
                  ? 'last'
                  : `behind ${faster}`;
          const what = row.restores ? 'answered by the restored replica' : 'first success';
          comeback.push(
            `After “${row.phase}”, ${what}: ${all.map((r) => `${flavour(r.client)} ${r[key] === undefined ? 'not seen' : ms(r[key])}`).join(', ')} (Breakwater ${place}).${row.restores ? '' : firstCallsAfter(report, row.phase, byClient.get(bw.client) ?? [])}`,
          );
        }
      }

      // "none 42% at 9 s, usual …": each client's lowest (or highest) second.
      const extreme = (
        value: (s: ClientReport['seconds'][number]) => number | undefined,
        unit: string,
        lowest: boolean,
      ) =>
        clients
          .map((c) => {
            let best: { t: number; v: number } | undefined;
            for (const s of c.seconds) {
              const v = value(s);
              if (v === undefined) continue;
              if (!best || (lowest ? v < best.v : v > best.v)) best = { t: s.t, v };
            }
            return best
              ? `${flavour(c.client)} ${Math.round(best.v)}${unit} at ${best.t} s`
              : `${flavour(c.client)} –`;
          })
          .join(', ');
      const success = `Lowest second: ${extreme((s) => (s.successRate === undefined ? undefined : s.successRate * 100), '%', true)}.`;
      const latency = `Highest per-second p99: ${extreme((s) => s.p99, ' ms', false)}.`;
      const load = `Server attempts per call over the run: ${clients
        .map((c) => `${flavour(c.client)} ${attemptsPerCall(c)?.toFixed(2) ?? '–'}`)
        .join(', ')}; in the outage phases: ${clients
        .map((c) => `${flavour(c.client)} ${c.outageAttemptsPerCall?.toFixed(2) ?? '–'}`)
        .join(', ')}.`;
      return {
        protocol,
        verdict: verdict?.summary ?? '',
        losses: verdict?.losses ?? [],
        comeback,
        charts: { success, latency, load },
      };
    },
  );
  return { protocols, recovery };
}

/** The heading over the verdicts, in the terminal and the report. */
export const GOALS_HEADING =
  'Against the best other client of its protocol (goals: examples/demo/README.md):';

/**
 * Recovery times this close are ties in the findings' ranking: the clients
 * start calls on their own schedules and loopback latency varies by a few ms.
 */
export const TIE_MS = 10;

/**
 * How Breakwater's own calls fared once the servers were back: the clients
 * start calls on their own schedules, so a peer's call started while the
 * servers were being healed can count as its first success; what Breakwater
 * did with the calls it started after the recovery is its own measure.
 */
function firstCallsAfter(
  report: ScenarioReport,
  phaseName: string,
  own: readonly CallRecord[],
): string {
  const phase = report.phases.find((p) => p.name === phaseName);
  if (!phase) return '';
  const ready = report.startedAt + phase.readyMs;
  const after = own.filter((c) => c.startedAt >= ready).sort((a, b) => a.startedAt - b.startedAt);
  const firstOk = after.findIndex((c) => c.ok);
  if (firstOk === 0) return ' Its first call started after the recovery succeeded.';
  if (firstOk < 0) return '';
  return ` Its first ${firstOk} call${firstOk === 1 ? '' : 's'} started after the recovery failed or ${firstOk === 1 ? 'was' : 'were'} refused.`;
}

/** Formats a recovery row's numbers for a table. */
export function recoveryCells(row: RecoveryRow): [string, string, string] {
  const restored = !row.restores
    ? '–'
    : row.restoredMs === undefined
      ? 'not seen'
      : ms(row.restoredMs);
  return [ms(row.firstSuccessMs), restored, pct(row.first2s)];
}
