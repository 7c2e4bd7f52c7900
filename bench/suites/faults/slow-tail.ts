/** Fault 3: one of three replicas is slow on 5% of calls (+200 ms). */
import { fmt, fx, pct, type Suite, type TargetResult } from '../../harness/report.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterRouterLane,
  grpcLane,
  grpcServiceConfig,
  type Lane,
  multiTarget,
} from '../clients.js';
import { phaseFigures, runLanes, startServers } from './common.js';

/** Fixed hedge delay for the clients that take one (grpc-js hedgingPolicy, Breakwater hedgingInterceptor). */
const HEDGE_DELAY_MS = 20;

export const slowTailSuite: Suite = {
  name: 'slow-tail',
  title: 'Fault 3: slow tail on one of three replicas (5% of calls +200 ms)',
  async run({ quick }) {
    const durationMs = quick ? 3000 : 10_000;
    const rate = quick ? 30 : 60;
    const servers = await startServers(3, false);
    const target = multiTarget(servers.grpcAddresses);
    const rr = grpcServiceConfig({ roundRobin: true });
    const lanes: Lane[] = [
      grpcLane('grpc-js round_robin, no hedging', target, rr),
      grpcLane(
        `grpc-js round_robin + hedgingPolicy (${HEDGE_DELAY_MS} ms)`,
        target,
        grpcServiceConfig({ roundRobin: true, hedgeDelayMs: HEDGE_DELAY_MS }),
      ),
      breakwaterRouterLane('Breakwater router, no hedging', servers.grpcAddresses),
      breakwaterRouterLane('Breakwater router, hedge at p95', servers.grpcAddresses, {
        percentile: 95,
        maxHedges: 1,
      }),
      breakwaterGrpcLane(
        `Breakwater hedgingInterceptor (${HEDGE_DELAY_MS} ms) over round_robin`,
        target,
        breakwaterGrpcOptions({ retry: false, hedge: { delay: HEDGE_DELAY_MS, attempts: 2 } }),
        rr,
      ),
    ];
    await servers.grpc[2]?.setFault({ latency: { kind: 'tail', percent: 5, extraMs: 200 } });
    const run = await runLanes(servers, lanes, [{ name: 'tail', kind: 'fault', durationMs }], rate);
    const figures = lanes.map((l) => ({ name: l.name, f: phaseFigures(run, l.name, 'tail') }));
    const rows = figures.map(({ name, f }) => [
      name,
      String(f.offered),
      pct(f.successRate, 2),
      fmt(f.p50, 2),
      fmt(f.p99, 1),
      fmt(f.p999, 1),
      pct((f.attemptsPerCall ?? Number.NaN) - 1, 1),
    ]);
    const base = figures.find((x) => x.name === 'Breakwater router, no hedging')?.f;
    const hedged = figures.find((x) => x.name === 'Breakwater router, hedge at p95')?.f;
    const targets: TargetResult[] = [];
    if (base?.p99 !== undefined && hedged?.p99 !== undefined) {
      const cut = base.p99 / hedged.p99;
      const extra = (hedged.attemptsPerCall ?? Infinity) - 1;
      const met = cut >= 5 && extra <= 0.1;
      targets.push({
        target: 'Hedging cuts p99 ≥ 5x with ≤ 10% extra calls (router, hedge at p95 vs no hedging)',
        figure: `${fx(cut, 1)} (${fmt(base.p99, 1)} → ${fmt(hedged.p99, 1)} ms), ${pct(extra)} extra`,
        met,
        ...(met
          ? {}
          : {
              note:
                cut < 5
                  ? `cut short by ${fx(5 / cut, 1)}: the hedged p99 is bounded below by the p95 hedge delay plus a normal call, and on this loaded machine the unhedged p99 is not all tail`
                  : `${pct(extra - 0.1)} more extra calls than allowed: a p95 trigger sends ~5% hedges plus those of the slow replica`,
            }),
      });
    }
    return {
      tables: [
        {
          title: `Three replicas, r2 adds 200 ms to 5% of calls; ${rate} calls/s per client, open loop, ${durationMs / 1000} s, all clients at once`,
          columns: [
            'Client',
            'Calls',
            'Success',
            'p50 ms',
            'p99 ms',
            'p99.9 ms',
            'Extra server calls',
          ],
          rows,
        },
      ],
      targets,
      notes: [
        `"Extra server calls" = server-side attempts per client call − 1 (hedges that the server received, including those cancelled after the first answer). The router hedges at the observed p95 of its own latency; grpc-js hedgingPolicy and Breakwater's hedgingInterceptor take a fixed delay (${HEDGE_DELAY_MS} ms here, set once, not tuned per run), each with 2 attempts at most. cockatiel, nice-grpc's retry middleware and tRPC retryLink have no hedging and are not in this table.`,
      ],
      data: { report: run.report },
    };
  },
};
