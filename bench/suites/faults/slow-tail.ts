/** Fault 3: one of three replicas is slow on 5% of calls (+200 ms). */

import { percentile, sortedAscending, summarizeLatency } from '@breakwater/chaos';
import { fmt, fx, pct, type Suite, type TargetResult } from '../../harness/report.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterRouterLane,
  breakwaterTrpcRoutingLinks,
  grpcLane,
  grpcServiceConfig,
  type Lane,
  multiTarget,
  routingChannelLane,
  trpcLane,
} from '../clients.js';
import {
  callsIn,
  type PhaseFigures,
  phaseFigures,
  runLanes,
  startServers,
  startTrpcServers,
} from './common.js';

const COLUMNS = [
  'Client',
  'Calls',
  'Success',
  'p50 ms',
  'p95 ms',
  'p99 ms',
  'p99.9 ms',
  'Extra server calls',
];

/** Fixed hedge delay for the clients that take one (grpc-js hedgingPolicy, Breakwater resilienceInterceptor's hedge). */
const HEDGE_DELAY_MS = 20;

export const slowTailSuite: Suite = {
  name: 'slow-tail',
  title: 'Fault 3: slow tail on one of three replicas (5% of calls +200 ms)',
  async run({ quick }) {
    // Only 5% of a third of the calls (1.7%) meet the tail. At 60 calls/s, 10 s gave a lane
    // ~10 tail calls against a p99 that is its 6th-slowest call, so whether the p99 landed in
    // the tail flipped between runs. 40 s gives ~40 tail calls against the 24th-slowest, so an
    // unhedged p99 is in the tail (2.5 standard deviations of the tail count) and a hedged p99
    // says whether the tail was cut.
    const durationMs = quick ? 3000 : 40_000;
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
        attempts: 2,
      }),
      routingChannelLane('Breakwater routing channel, no hedging', servers.grpcAddresses),
      routingChannelLane('Breakwater routing channel, hedge at p95', servers.grpcAddresses, {
        percentile: 95,
        attempts: 2,
      }),
      breakwaterGrpcLane(
        `Breakwater resilienceInterceptor hedge (${HEDGE_DELAY_MS} ms) over round_robin`,
        target,
        breakwaterGrpcOptions({ retry: false, hedge: { delayMs: HEDGE_DELAY_MS, attempts: 2 } }),
        rr,
      ),
    ];
    const tail = { latency: { kind: 'tail' as const, percent: 5, extraMs: 200 } };
    await servers.grpc[2]?.setFault(tail);
    const run = await runLanes(servers, lanes, [{ name: 'tail', kind: 'fault', durationMs }], rate);
    // tRPC: the same tail on one of three tRPC servers, Breakwater routingLink with and without hedging.
    const trpcServers = await startTrpcServers(3);
    const trpcLanes: Lane[] = [
      trpcLane(
        'Breakwater tRPC routingLink, no hedging',
        breakwaterTrpcRoutingLinks(trpcServers.urls),
      ),
      trpcLane(
        'Breakwater tRPC routingLink, hedge at p95',
        breakwaterTrpcRoutingLinks(trpcServers.urls, { percentile: 95, attempts: 2 }),
      ),
    ];
    await trpcServers.all[2]?.setFault(tail);
    const trpcRun = await runLanes(
      trpcServers,
      trpcLanes,
      [{ name: 'tail', kind: 'fault', durationMs }],
      rate,
    );
    const figuresOf = (r: typeof run, ls: readonly Lane[]) =>
      ls.map((l) => ({
        name: l.name,
        f: phaseFigures(r, l.name, 'tail'),
        p95: percentile(sortedAscending(callsIn(r, l.name, 'tail').map((c) => c.latencyMs)), 95),
      }));
    const figures = figuresOf(run, lanes);
    const trpcFigures = figuresOf(trpcRun, trpcLanes);
    const rowsOf = (fs: typeof figures) =>
      fs.map(({ name, f, p95 }) => [
        name,
        String(f.offered),
        pct(f.successRate, 2),
        fmt(f.p50, 2),
        fmt(p95, 1),
        fmt(f.p99, 1),
        fmt(f.p999, 1),
        pct((f.attemptsPerCall ?? Number.NaN) - 1, 1),
      ]);
    const targets: TargetResult[] = [];
    const flavours = [
      { kind: 'router', run, figures, slow: 'r2' },
      { kind: 'routing channel', run, figures, slow: 'r2' },
      { kind: 'tRPC routingLink', run: trpcRun, figures: trpcFigures, slow: 't2' },
    ];
    for (const { kind, run, figures, slow } of flavours) {
      const base = figures.find((x) => x.name === `Breakwater ${kind}, no hedging`)?.f;
      const hedged = figures.find((x) => x.name === `Breakwater ${kind}, hedge at p95`)?.f;
      if (base?.p99 === undefined || hedged?.p99 === undefined) continue;
      // The unhedged lane's calls that the fast servers answered: what a call costs on this
      // machine when the tail is not involved, so the lowest p99 any hedge could reach.
      const healthy = callsIn(run, `Breakwater ${kind}, no hedging`, 'tail').filter(
        (c) => c.ok && c.replica !== slow,
      );
      const floor = summarizeLatency(healthy.map((c) => c.latencyMs)).p99;
      const hedgedP95 = figures.find((x) => x.name === `Breakwater ${kind}, hedge at p95`)?.p95;
      targets.push(hedgeTarget(kind, base, hedged, floor, hedgedP95));
    }
    return {
      tables: [
        {
          title: `gRPC: three replicas, r2 adds 200 ms to 5% of calls; ${rate} calls/s per client, open loop, ${durationMs / 1000} s, all clients at once`,
          columns: COLUMNS,
          rows: rowsOf(figures),
        },
        {
          title: `tRPC: three tRPC servers, t2 adds 200 ms to 5% of calls; ${rate} calls/s per client, open loop, ${durationMs / 1000} s`,
          columns: COLUMNS,
          rows: rowsOf(trpcFigures),
        },
      ],
      targets,
      notes: [
        `"Extra server calls" = server-side attempts per client call − 1 (hedges that the server received, including those cancelled after the first answer). The router and the routing channel (\`createRoutingChannel\` from \`@breakwater/grpc-js\`, the same core router behind a grpc-js \`Channel\`, given to a plain grpc-js client as \`channelOverride\`) hedge at the observed p95 of their own latency; grpc-js hedgingPolicy and Breakwater's hedgingInterceptor take a fixed delay (${HEDGE_DELAY_MS} ms here, set once, not tuned per run), each with 2 attempts at most. A percentile hedge fires only after its router's own recent p95 (the request latencies of the last 30 s, at most 512, stalls of the machine included; the hedged lane's "p95 ms" is about that trigger), so when more than 5% of calls are stalled by a loaded machine the trigger rises towards or past the 200 ms tail and tail calls end before the hedge would start. "Healthy p99" in the targets is the p99 of the unhedged lane's calls answered by the two fast replicas: no hedge can bring the p99 below it. cockatiel, nice-grpc's retry middleware and tRPC retryLink have no hedging and are not in this table. The tRPC run (after the gRPC one, on fresh servers) uses Breakwater \`routingLink\` over three \`httpBatchLink\`s (one call per request), round-robin, the same router settings; tRPC has no hedging of its own.`,
      ],
      data: { report: run.report, trpc: trpcRun.report },
    };
  },
};

/** Share of calls that meet the slow replica's tail under round-robin over three: 5% of a third. */
const TAIL_SHARE = 0.05 / 3;

/** The hedging target for one Breakwater router flavour, with a note derived from the figures. */
function hedgeTarget(
  kind: string,
  base: PhaseFigures,
  hedged: PhaseFigures,
  healthyP99: number | undefined,
  hedgedP95: number | undefined,
): TargetResult {
  const cut = (base.p99 as number) / (hedged.p99 as number);
  const extra = (hedged.attemptsPerCall ?? Infinity) - 1;
  const met = cut >= 5 && extra <= 0.1;
  const notes: string[] = [];
  if (cut < 5) {
    const b = base.p99 as number;
    const trigger = `the hedged lane's p95 (about its hedge trigger) was ${fmt(hedgedP95, 1)} ms`;
    const why =
      b < 200
        ? `the unhedged p99 (${fmt(b, 1)} ms) is below the 200 ms the slow replica adds, so the tail is not what sets it`
        : extra < TAIL_SHARE
          ? `hedges fired for ${pct(extra)} of calls, fewer than the ${pct(TAIL_SHARE)} that meet the slow replica's tail (5% of a third), so some tail calls were never hedged: ${trigger}, as slow as the tail itself, because more than 5% of calls were stalled by the loaded machine`
          : healthyP99 !== undefined && b / healthyP99 < 5
            ? `the calls the tail never touched have a p99 of ${fmt(healthyP99, 1)} ms on this machine (unhedged lane, fast replicas), so no hedge could cut more than ${fx(b / healthyP99, 1)}; ${trigger}`
            : `the unhedged p99 (${fmt(b, 1)} ms) is the replica's tail; the hedged p99 (${fmt(hedged.p99, 1)} ms) is the hedge delay plus a second call (${trigger}), both slowed by the loaded machine (hedged p50 ${fmt(hedged.p50, 2)} ms)`;
    notes.push(`cut short by ${fx(5 / cut, 1)}: ${why}`);
  }
  if (extra > 0.1) notes.push(`${pct(extra - 0.1)} more extra calls than allowed`);
  return {
    target: `Hedging cuts p99 ≥ 5x with ≤ 10% extra calls (${kind}, hedge at p95 vs no hedging)`,
    figure: `${fx(cut, 1)} (${fmt(base.p99, 1)} → ${fmt(hedged.p99, 1)} ms; healthy p99 ${fmt(healthyP99, 1)} ms), ${pct(extra)} extra`,
    met,
    ...(met ? {} : { note: notes.join('; ') }),
  };
}
