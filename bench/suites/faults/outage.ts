/** Fault 2: full outage of the only replica, then recovery while 10% still fail. */
import type { AttemptRecord } from '@breakwater/chaos';
import { fmt, pct, type Suite, type TargetResult } from '../../harness/report.js';
import { latencySummary } from '../../harness/stats.js';
import {
  allAttempts,
  laneNames,
  ms,
  phaseFigures,
  runSplit,
  setFaultAll,
  standardLanes,
  startServers,
} from './common.js';

const BREAKWATER = ['Breakwater grpc-js', 'Breakwater nice-grpc', 'Breakwater tRPC'];
/** Sequential refused calls timed per Breakwater client. */
const REFUSALS = 500;

export const outageSuite: Suite = {
  name: 'outage',
  title: 'Fault 2: full outage of the only replica, then recovery with 10% errors',
  async run({ quick }) {
    const outageMs = quick ? 3000 : 10_000;
    const recoveryMs = quick ? 3000 : 10_000;
    const tripMs = 1000;
    const rate = quick ? 30 : 50;
    const run = await runSplit(
      (servers) => [
        {
          name: 'trip',
          kind: 'outage',
          durationMs: tripMs,
          enter: () => setFaultAll(servers.all, { errorRate: 1 }),
        },
        { name: 'outage', kind: 'outage', durationMs: outageMs - tripMs },
        {
          name: 'recovery',
          kind: 'recovery',
          durationMs: recoveryMs,
          enter: () => setFaultAll(servers.all, { errorRate: 0.1 }),
        },
      ],
      rate,
    );
    const lanes = laneNames(run).map((name) => ({ name }));
    const refused = await refusalLatency(REFUSALS);
    const rows = lanes.map((l) => {
      const o = phaseFigures(run, l.name, 'outage');
      const r = phaseFigures(run, l.name, 'recovery');
      return [
        l.name,
        fmt(phaseFigures(run, l.name, 'trip').attemptsPerCall, 2),
        fmt(o.attemptsPerCall, 3),
        ms(o.failedP50),
        ms(o.failedP99),
        pct(r.successRate, 2),
        fmt(r.attemptsPerCall, 3),
      ];
    });
    const targets: TargetResult[] = [];
    for (const name of BREAKWATER) {
      const o = phaseFigures(run, name, 'outage');
      if (o.offered === 0) continue;
      const apc = o.attemptsPerCall ?? Infinity;
      targets.push({
        target: `${name}: ≤ 0.2 server attempts per call during the outage once tripped`,
        figure: fmt(apc, 3),
        met: apc <= 0.2,
        ...(apc <= 0.2
          ? {}
          : {
              note: `${fx1(apc / 0.2)} the target; with a 1 s cooldown a half-open probe call (with its retries) runs every second`,
            }),
      });
      const r = refused[name];
      const p50 = r?.p50 ?? Infinity;
      targets.push({
        target: `${name}: refused calls answered in < 100 µs (median of ${REFUSALS} sequential refused calls)`,
        figure: `p50 ${ms(r?.p50)}, p99 ${ms(r?.p99)} (${r?.attempts ?? '–'} reached the server)`,
        met: p50 < 0.1,
        ...(p50 < 0.1
          ? {}
          : {
              note: `${fx1(p50 / 0.1)} the target; a refusal still goes through the framework's call set-up and error path (grpc-js call object, status, callbacks; tRPC observable chain) before the caller sees it`,
            }),
      });
    }
    const noBudget = phaseFigures(run, 'grpc-js retryPolicy', 'recovery').successRate ?? 0;
    const noBudgetTrpc = phaseFigures(run, 'tRPC retryLink', 'recovery').successRate ?? 0;
    for (const name of BREAKWATER) {
      const r = phaseFigures(run, name, 'recovery');
      if (r.offered === 0) continue;
      const reference = name.includes('tRPC') ? noBudgetTrpc : noBudget;
      const refName = name.includes('tRPC')
        ? 'tRPC retryLink'
        : 'grpc-js retryPolicy (no throttling)';
      const gap = reference - (r.successRate ?? 0);
      targets.push({
        target: `${name}: success in the ${recoveryMs / 1000} s after recovery as high as with no budget (${refName})`,
        figure: `${pct(r.successRate, 2)} vs ${pct(reference, 2)}`,
        met: gap <= 0.005,
        ...(gap <= 0.005
          ? { note: 'met = within 0.5 points' }
          : {
              note: `${(gap * 100).toFixed(2)} points lower. Limits: after the outage the circuit refuses calls until its 1 s cooldown lets a probe through (${pct(1000 / recoveryMs)} of the window at most), a failed probe re-opens it for another cooldown, and the retry budget (20% of requests + 10/s over 10 s) must refill after the outage drained it`,
            }),
      });
    }
    return {
      tables: [
        {
          title: `One replica: healthy 2 s → 100% failing ${outageMs / 1000} s → 10% failing ${recoveryMs / 1000} s; ${rate} calls/s per client, open loop, all clients of a protocol at once (gRPC clients first, then tRPC clients, each against a fresh server)`,
          columns: [
            'Client',
            'Attempts / call, first 1 s of outage',
            'Attempts / call, rest of outage',
            'Failed-call latency p50 (outage)',
            'Failed-call latency p99 (outage)',
            `Success, ${recoveryMs / 1000} s after recovery`,
            'Attempts / call after recovery',
          ],
          rows,
        },
      ],
      targets: targets.sort((a, b) => (a.target < b.target ? -1 : 1)),
      notes: [
        `Refused-call latency (targets below) is measured separately, because the scenario clock has 1 ms resolution: each Breakwater client calls a server that fails everything, sequentially, until its circuit is open, then times ${REFUSALS} more sequential calls with \`performance.now()\`. The table's failed-call latency columns are the scenario's own (1 ms resolution, under the full load of all clients).`,
        'During the outage every attempt fails with UNAVAILABLE (503 on tRPC); the server stays up and counts what it receives. "Rest of outage" starts 1 s into the outage, after the circuits have had time to trip. A Breakwater call refused by an open circuit never reaches the server (0 attempts) and fails with UNAVAILABLE / a TRPCClientError whose cause is CircuitOpenError. Breakwater circuits: 5 consecutive failed calls open them, 1 s cooldown, one probe; retries draw on a retry budget (ratio 0.2, 10 retries/s minimum, 10 s window).',
      ],
      data: { reports: run.map((r) => r.report) },
    };
  },
};

function fx1(x: number): string {
  return `${x.toFixed(1)}x`;
}

/**
 * Latency of calls an open circuit refuses, timed with `performance.now()`
 * (the scenario clock has 1 ms resolution): each Breakwater lane makes
 * sequential calls to a server that fails everything until its circuit is
 * open, then times `n` more sequential calls, which it refuses.
 */
async function refusalLatency(
  n: number,
): Promise<Record<string, { p50: number | undefined; p99: number | undefined; attempts: number }>> {
  const servers = await startServers(1, true);
  const lanes = standardLanes(servers.grpcAddresses[0] as string, servers.trpcUrl).filter((l) =>
    BREAKWATER.includes(l.name),
  );
  const out: Record<
    string,
    { p50: number | undefined; p99: number | undefined; attempts: number }
  > = {};
  try {
    await setFaultAll(servers.all, { errorRate: 1 });
    for (const lane of lanes) {
      const call = (i: number) =>
        lane.call({ callId: `${lane.name}-refused-${i}`, index: i }).catch(() => undefined);
      for (let i = 0; i < 10; i++) await call(-1 - i); // trips the circuit (5 failed calls open it)
      const before = served(await allAttempts(servers.all), lane.name);
      const samples: number[] = [];
      for (let i = 0; i < n; i++) {
        const t0 = performance.now();
        await call(i);
        samples.push(performance.now() - t0);
      }
      const after = served(await allAttempts(servers.all), lane.name);
      const summary = latencySummary(samples);
      out[lane.name] = { p50: summary.p50, p99: summary.p99, attempts: after - before };
    }
  } finally {
    for (const l of lanes) l.close();
    await servers.close();
  }
  return out;
}

/** Server-side attempts of the timed refusal calls of `lane` (trip calls have negative indices, `--`). */
function served(attempts: readonly AttemptRecord[], lane: string): number {
  let n = 0;
  for (const a of attempts) {
    if (a.callId.startsWith(`${lane}-refused-`) && !a.callId.includes('--')) n += a.count ?? 1;
  }
  return n;
}
