/**
 * What a run shows, in sentences computed from its numbers: where Breakwater
 * lost to another client and the measured evidence of why, how each client
 * came back after a recovery, and one line under each chart. Nothing here is
 * a claim written in advance: every number comes from the run.
 */
import type { AttemptRecord, CallRecord, ClientReport, ScenarioReport } from '@breakwater/chaos';
import { describeLane } from './lane-descriptions.js';
import { CALL_DEADLINE_MS } from './lanes.js';

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
  /** Where Breakwater did worse than another client, each with numbers and evidence. */
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

/** Server-side attempts per call id, and on how many distinct replicas. */
function attemptIndex(attempts: readonly AttemptRecord[]) {
  const count = new Map<string, number>();
  const replicas = new Map<string, Set<string>>();
  for (const a of attempts) {
    count.set(a.callId, (count.get(a.callId) ?? 0) + (a.count ?? 1));
    let set = replicas.get(a.callId);
    if (!set) {
      set = new Set();
      replicas.set(a.callId, set);
    }
    set.add(a.replica);
  }
  return { count, replicas };
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
  const index = attemptIndex(attempts);
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
      const others = clients.filter((c) => c !== bw);
      const losses: string[] = [];
      const comeback: string[] = [];
      // Whether a loss came from circuits still open after failures (then say once how they close).
      let circuits = false;
      if (bw) {
        // Success, phase by phase.
        for (const [i, phase] of bw.phases.entries()) {
          const window = report.phases[i];
          if (phase.successRate === undefined || !window) continue;
          const best = others
            .map((o) => ({ o, rate: o.phases[i]?.successRate }))
            .filter((x): x is { o: ClientReport; rate: number } => x.rate !== undefined)
            .sort((a, b) => b.rate - a.rate)[0];
          if (!best || phase.successRate >= best.rate - 0.01) continue;
          const failed = windowCalls(bw.client, window.startMs, window.endMs).filter((c) => !c.ok);
          const unsent = failed.filter((c) => (index.count.get(c.callId) ?? 0) === 0).length;
          const why = `its failures: ${topErrors(failed)}; the servers saw ${failed.length - unsent === 0 ? 'none' : failed.length - unsent} of those ${failed.length} calls`;
          if (window.kind === 'recovery' || window.kind === 'outage') circuits = true;
          losses.push(
            `In “${phase.phase}”${phase.phase === phase.kind ? '' : ` (${phase.kind})`} Breakwater answered ${pct(phase.successRate)} of calls, ${flavour(best.o.client)} ${pct(best.rate)}: ${why}`,
          );
        }
        // Tail latency.
        const bestP99 = others
          .filter((o) => o.latency.p99 !== undefined)
          .sort((a, b) => (a.latency.p99 ?? 0) - (b.latency.p99 ?? 0))[0];
        const p99 = bw.latency.p99;
        if (bestP99 && p99 !== undefined && p99 > (bestP99.latency.p99 ?? 0) * 1.2 + 20) {
          const worst = [...bw.phases.entries()]
            .filter(([, p]) => p.latency.p99 !== undefined)
            .sort((a, b) => (b[1].latency.p99 ?? 0) - (a[1].latency.p99 ?? 0))[0];
          let why = '';
          if (worst) {
            const [i, p] = worst;
            const window = report.phases[i];
            const inPhase = window ? windowCalls(bw.client, window.startMs, window.endMs) : [];
            const answered = new Set(inPhase.filter((c) => c.ok).map((c) => c.replica));
            const atDeadline = inPhase.filter((c) => c.latencyMs >= CALL_DEADLINE_MS - 10).length;
            why = `; its worst phase was “${p.phase}” (p99 ${ms(p.latency.p99)})`;
            if (answered.size === 1) {
              why += `, where only ${[...answered][0]} answered it, so a hedge had no other replica to go to`;
            }
            if (atDeadline > 0)
              why += `; ${atDeadline} of its calls there ran into the 1 s deadline`;
          }
          losses.push(
            `Breakwater's p99 was ${ms(p99)} over the run, against ${ms(bestP99.latency.p99)} for ${flavour(bestP99.client)}${why}.`,
          );
        }
        // Recovery.
        for (const row of recovery.filter((r) => r.client === bw.client)) {
          const peers = recovery.filter(
            (r) =>
              r.phase === row.phase && r.client !== bw.client && protocolOf(r.client) === protocol,
          );
          for (const [key, what] of [
            ['restoredMs', 'to be answered by the restored replica'],
            ['firstSuccessMs', 'to get a first success'],
          ] as const) {
            const mine = row[key];
            const seen = peers.filter((r) => r[key] !== undefined);
            if (seen.length === 0) continue;
            const fastest = seen.sort((a, b) => (a[key] ?? 0) - (b[key] ?? 0))[0] as RecoveryRow;
            if (mine !== undefined && mine <= (fastest[key] ?? 0) + 100) continue;
            circuits = true;
            losses.push(
              mine === undefined
                ? `After “${row.phase}” Breakwater did not manage ${what} in the rest of the run; ${flavour(fastest.client)} did after ${ms(fastest[key])}.`
                : `After “${row.phase}” Breakwater took ${ms(mine)} ${what}, ${flavour(fastest.client)} ${ms(fastest[key])}.`,
            );
          }
        }
        if (circuits) losses.push(`How Breakwater comes back: ${describeLane(bw.client).recovery}`);
        // Every recovery, won or lost: each client's time back, then the mechanism once.
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
        // Said once: above with the losses when Breakwater lost, else here.
        if (comeback.length > 0)
          comeback.push(
            circuits
              ? 'Why: see “How Breakwater comes back” above.'
              : `Why: ${describeLane(bw.client).recovery}`,
          );
        // The cost of hedges and failovers, stated whether or not it lost anything:
        // attempts beyond the first of each call that reached a server.
        let reachedCalls = 0;
        let extra = 0;
        let twice = 0;
        for (const c of byClient.get(bw.client) ?? []) {
          const n = index.count.get(c.callId) ?? 0;
          if (n === 0) continue;
          reachedCalls++;
          extra += n - 1;
          if ((index.replicas.get(c.callId)?.size ?? 0) > 1) twice++;
        }
        if (extra > 0) {
          losses.push(
            `Hedges and failovers cost the servers ${extra} extra attempts for the ${reachedCalls} Breakwater calls that reached one (+${((extra / reachedCalls) * 100).toFixed(1)}% work); ${twice} calls reached two replicas. Its retry budget caps this.`,
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
      return { protocol, losses, comeback, charts: { success, latency, load } };
    },
  );
  return { protocols, recovery };
}

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
