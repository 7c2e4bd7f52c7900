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
  routingChannelLane,
} from '../clients.js';
import { type PhaseFigures, phaseFigures, runLanes, startServers } from './common.js';

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
      routingChannelLane('Breakwater routing channel, no hedging', servers.grpcAddresses),
      routingChannelLane('Breakwater routing channel, hedge at p95', servers.grpcAddresses, {
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
    const targets: TargetResult[] = [];
    for (const kind of ['router', 'routing channel']) {
      const base = figures.find((x) => x.name === `Breakwater ${kind}, no hedging`)?.f;
      const hedged = figures.find((x) => x.name === `Breakwater ${kind}, hedge at p95`)?.f;
      if (base?.p99 === undefined || hedged?.p99 === undefined) continue;
      targets.push(hedgeTarget(kind, base, hedged));
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
        `"Extra server calls" = server-side attempts per client call − 1 (hedges that the server received, including those cancelled after the first answer). The router and the routing channel (\`createRoutingChannel\` from \`@breakwater/grpc-js\`, the same core router behind a grpc-js \`Channel\`, given to a plain grpc-js client as \`channelOverride\`) hedge at the observed p95 of their own latency; grpc-js hedgingPolicy and Breakwater's hedgingInterceptor take a fixed delay (${HEDGE_DELAY_MS} ms here, set once, not tuned per run), each with 2 attempts at most. cockatiel, nice-grpc's retry middleware and tRPC retryLink have no hedging and are not in this table.`,
      ],
      data: { report: run.report },
    };
  },
};

/** Share of calls that meet the slow replica's tail under round-robin over three: 5% of a third. */
const TAIL_SHARE = 0.05 / 3;

/** The hedging target for one Breakwater router flavour, with a note derived from the figures. */
function hedgeTarget(kind: string, base: PhaseFigures, hedged: PhaseFigures): TargetResult {
  const cut = (base.p99 as number) / (hedged.p99 as number);
  const extra = (hedged.attemptsPerCall ?? Infinity) - 1;
  const met = cut >= 5 && extra <= 0.1;
  const notes: string[] = [];
  if (cut < 5) {
    const b = base.p99 as number;
    const why =
      b < 200
        ? `the unhedged p99 (${fmt(b, 1)} ms) is below the 200 ms the slow replica adds, so the tail is not what sets it`
        : extra < TAIL_SHARE
          ? `hedges fired for ${pct(extra)} of calls, fewer than the ${pct(TAIL_SHARE)} that meet the slow replica's tail (5% of a third), so some tail calls were never hedged: the p95 trigger (observed latency on this loaded machine) was above what those calls needed`
          : b < 400
            ? `the unhedged p99 (${fmt(b, 1)} ms) is the replica's 200 ms tail; the hedged p99 (${fmt(hedged.p99, 1)} ms) is the hedge delay (the observed p95) plus a second call, both slowed by the loaded machine (hedged p50 ${fmt(hedged.p50, 2)} ms)`
            : `an unhedged p99 of ${fmt(b, 1)} ms (p50 ${fmt(base.p50, 2)} ms) is stalls of the whole machine, which delay a hedge as much as the first attempt`;
    notes.push(`cut short by ${fx(5 / cut, 1)}: ${why}`);
  }
  if (extra > 0.1) notes.push(`${pct(extra - 0.1)} more extra calls than allowed`);
  return {
    target: `Hedging cuts p99 ≥ 5x with ≤ 10% extra calls (${kind}, hedge at p95 vs no hedging)`,
    figure: `${fx(cut, 1)} (${fmt(base.p99, 1)} → ${fmt(hedged.p99, 1)} ms), ${pct(extra)} extra`,
    met,
    ...(met ? {} : { note: notes.join('; ') }),
  };
}
