/** Fault 2: full outage of the only replica, then recovery while 10% still fail. */
import { type AttemptRecord, summarizeLatency } from '@breakwater/chaos';
import { fmt, pct, type Suite, type TargetResult } from '../../harness/report.js';
import {
  allAttempts,
  callsIn,
  laneNames,
  ms,
  NO_BUDGET,
  phaseFigures,
  phaseStartAt,
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
      true,
    );
    const lanes = laneNames(run).map((name) => ({ name }));
    const after = (name: string) => recoveryFailures(run, name);
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
        String(after(l.name).refused),
        String(after(l.name).failed - after(l.name).refused),
        after(l.name).refused === 0 ? '–' : ms(after(l.name).lastRefusalMs),
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
      const own = phaseFigures(run, `${name}${NO_BUDGET}`, 'recovery');
      const f = after(name);
      const why = `${f.failed} of ${r.offered} calls failed: ${f.refused} refused by the client's open circuit (the last one ${ms(f.lastRefusalMs)} after recovery began: 1 s cooldown, then one probe call at a time, and a probe that fails — 10% of them — re-opens it), ${f.failed - f.refused} failed at the server after the retries allowed`;
      targets.push({
        target: `${name}: success in the ${recoveryMs / 1000} s after recovery as high as with no budget (${refName})`,
        figure: `${pct(r.successRate, 2)} vs ${pct(reference, 2)}`,
        met: gap <= 0.005,
        note:
          gap <= 0.005
            ? `met = within 0.5 points; ${why}`
            : `${(gap * 100).toFixed(2)} points lower; ${why}`,
      });
      if (own.offered > 0) {
        const budgetGap = (own.successRate ?? 0) - (r.successRate ?? 0);
        const o = after(`${name}${NO_BUDGET}`);
        targets.push({
          target: `${name}: the retry budget costs no success after recovery (same stack with vs without \`budget\`)`,
          figure: `${pct(r.successRate, 2)} with vs ${pct(own.successRate, 2)} without`,
          met: budgetGap <= 0.005,
          note: `${budgetGap <= 0.005 ? 'met = within 0.5 points' : `${(budgetGap * 100).toFixed(2)} points lower with the budget`}. Failed at the server (the only failures a budget can add, by refusing a retry): ${f.failed - f.refused} with, ${o.failed - o.refused} without; refused by the circuit: ${f.refused} with, ${o.refused} without (how many depends on where each circuit was in its 1 s cooldown when the replica recovered, not on the budget)`,
        });
      }
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
            'After recovery: calls refused by the client (circuit)',
            'After recovery: calls failed at the server',
            'Last refusal, after recovery started',
            'Attempts / call after recovery',
          ],
          rows,
        },
      ],
      targets: targets.sort((a, b) => (a.target < b.target ? -1 : 1)),
      notes: [
        `Refused-call latency (targets below) is measured separately, because the scenario clock has 1 ms resolution: each Breakwater client calls a server that fails everything, sequentially, until its circuit is open, then times ${REFUSALS} more sequential calls with \`performance.now()\`. The table's failed-call latency columns are the scenario's own (1 ms resolution, under the full load of all clients).`,
        'During the outage every attempt fails with UNAVAILABLE (503 on tRPC); the server stays up and counts what it receives. "Rest of outage" starts 1 s into the outage, after the circuits have had time to trip. A Breakwater call refused by an open circuit never reaches the server (0 attempts) and fails with UNAVAILABLE / a TRPCClientError whose cause is CircuitOpenError. Breakwater circuits: 5 consecutive failed calls open them, 1 s cooldown, one probe; retries draw on a retry budget (ratio 0.2, 10 retries/s minimum, 10 s window).',
        `"Breakwater grpc-js${NO_BUDGET}" and "Breakwater tRPC${NO_BUDGET}" are the same stacks without the retry budget (circuit, deadline and 3 attempts unchanged): they separate what the budget costs after recovery from what the circuit costs. The outage has one replica, so there is nowhere to fail over to; a refused call fails (with several replicas, \`createRouter\` or \`createRoutingChannel\` send it to the next one — see Fault 4).`,
      ],
      data: { reports: run.map((r) => r.report) },
    };
  },
};

/** Failed calls of `client` in the recovery phase, and how many the client refused itself. */
function recoveryFailures(
  runs: Parameters<typeof callsIn>[0],
  client: string,
): { failed: number; refused: number; lastRefusalMs: number | undefined } {
  const start = phaseStartAt(runs, client, 'recovery') ?? 0;
  const failed = callsIn(runs, client, 'recovery').filter((c) => !c.ok);
  const refused = failed.filter((c) => /circuit/i.test(c.error ?? ''));
  return {
    failed: failed.length,
    refused: refused.length,
    lastRefusalMs:
      refused.length === 0 ? undefined : Math.max(...refused.map((c) => c.startedAt - start)),
  };
}

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
      const summary = summarizeLatency(samples);
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
