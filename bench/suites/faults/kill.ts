/** Fault 4: one of three replicas is killed (SIGKILL) and restarted. */

import { fmt, type Suite, type TargetResult } from '../../harness/report.js';
import {
  breakwaterGrpcLane,
  breakwaterRouterLane,
  breakwaterTrpcRoutingLinks,
  grpcLane,
  grpcServiceConfig,
  type Lane,
  multiTarget,
  routingChannelLane,
  trpcLane,
  trpcRetryLinks,
  trpcTerminal,
} from '../clients.js';
import {
  callsIn,
  ms,
  phaseFigures,
  runLanes,
  type Servers,
  startServers,
  startTrpcServers,
} from './common.js';

const RR_RETRY = 'grpc-js round_robin + retryPolicy';

/** What one client saw around the kill. */
interface KillFigures {
  name: string;
  failed: number;
  offered: number;
  failoverMs: number;
  p99: number | undefined;
  p999: number | undefined;
  returnMs: number | undefined;
}

/** Kills `victimId` of `servers` for `downMs`, restarts it for `upMs`, with every lane at `rate`. */
async function killRun(
  servers: Servers,
  lanes: readonly Lane[],
  victimId: string,
  downMs: number,
  upMs: number,
  rate: number,
) {
  const victim = servers.all.find((t) => t.id === victimId);
  const run = await runLanes(
    servers,
    lanes,
    [
      { name: 'killed', kind: 'outage', durationMs: downMs, enter: () => victim?.kill() },
      {
        name: 'restarted',
        kind: 'recovery',
        durationMs: upMs,
        restores: [victimId],
        enter: () => victim?.restart(),
      },
    ],
    rate,
  );
  const killedAt =
    run.report.startedAt + (run.report.phases.find((p) => p.name === 'killed')?.startMs ?? 0);
  const figures: KillFigures[] = lanes.map((l) => {
    const down = phaseFigures(run, l.name, 'killed');
    const up = phaseFigures(run, l.name, 'restarted');
    const failures = [
      ...callsIn(run, l.name, 'killed'),
      ...callsIn(run, l.name, 'restarted'),
    ].filter((c) => !c.ok);
    // Fail-over time: from the kill to the end of the last failed call (0 when nothing failed).
    const lastFailure = Math.max(killedAt, ...failures.map((c) => c.startedAt + c.latencyMs));
    const report = run.report.clients.find((c) => c.client === l.name);
    return {
      name: l.name,
      failed: failures.length,
      offered: down.offered + up.offered,
      failoverMs: lastFailure - killedAt,
      p99: down.p99,
      p999: down.p999,
      returnMs: report?.recoveryMs,
    };
  });
  return { run, figures };
}

function rowsOf(figures: readonly KillFigures[]): string[][] {
  return figures.map((f) => [
    f.name,
    String(f.offered),
    String(f.failed),
    f.failed === 0 ? '0 (nothing failed)' : ms(f.failoverMs),
    fmt(f.p99, 1),
    fmt(f.p999, 1),
    f.returnMs === undefined ? 'never' : ms(f.returnMs),
  ]);
}

const COLUMNS = [
  'Client',
  'Calls after the kill',
  'Failed',
  'Time to fail over',
  'p99 ms while down',
  'p99.9 ms while down',
  'Time to return (first answer from the restarted server)',
];

export const killSuite: Suite = {
  name: 'kill',
  title: 'Fault 4: replica killed and restarted',
  async run({ quick }) {
    const downMs = quick ? 2000 : 5000;
    const upMs = quick ? 2000 : 5000;
    const rate = quick ? 30 : 60;
    const servers = await startServers(3, false);
    const target = multiTarget(servers.grpcAddresses);
    const rr = grpcServiceConfig({ roundRobin: true });
    const lanes: Lane[] = [
      grpcLane('grpc-js round_robin, no retries', target, rr),
      grpcLane(RR_RETRY, target, grpcServiceConfig({ roundRobin: true, retry: true })),
      breakwaterGrpcLane('Breakwater grpc-js interceptors over round_robin', target, undefined, rr),
      breakwaterRouterLane('Breakwater router (3 channels)', servers.grpcAddresses),
      routingChannelLane('Breakwater routing channel (3 targets)', servers.grpcAddresses),
    ];
    const grpc = await killRun(servers, lanes, 'r0', downMs, upMs, rate);
    const figures = grpc.figures;
    // tRPC has no multi-server client of its own: its peers know one server, Breakwater three.
    const trpcServers = await startTrpcServers(3);
    const [t0] = trpcServers.urls as [string];
    const trpcLanes: Lane[] = [
      trpcLane('tRPC httpBatchLink (one server), no resilience', [trpcTerminal(t0, 1)]),
      trpcLane('tRPC retryLink (one server)', trpcRetryLinks(trpcTerminal(t0, 1))),
      trpcLane(
        'Breakwater tRPC routingLink (3 servers)',
        breakwaterTrpcRoutingLinks(trpcServers.urls),
      ),
    ];
    const trpc = await killRun(trpcServers, trpcLanes, 't0', downMs, upMs, rate);
    const run = grpc.run;
    const targets: TargetResult[] = [];
    const peer = figures.find((f) => f.name === RR_RETRY);
    for (const f of [...figures, ...trpc.figures].filter((x) => x.name.startsWith('Breakwater'))) {
      targets.push({
        target: `${f.name}: zero failed idempotent calls on replica kill`,
        figure: `${f.failed} failed of ${f.offered}`,
        met: f.failed === 0,
        ...(f.failed === 0 ? {} : { note: `${f.failed} calls failed; see the table for when` }),
      });
      // The tRPC peers cannot fail over, so only the gRPC lanes have a p99 peer.
      if (peer?.p99 !== undefined && f.p99 !== undefined && figures.includes(f)) {
        targets.push({
          target: `${f.name}: p99 during fail-over no worse than ${RR_RETRY}`,
          figure: `${fmt(f.p99, 1)} ms vs ${fmt(peer.p99, 1)} ms`,
          met: f.p99 <= peer.p99,
          ...(f.p99 <= peer.p99 ? {} : { note: `${fmt(f.p99 - peer.p99, 1)} ms worse` }),
        });
      }
    }
    return {
      tables: [
        {
          title: `gRPC: three replicas (child processes): healthy 2 s → r0 SIGKILLed for ${downMs / 1000} s → r0 restarted on the same port, ${upMs / 1000} s; ${rate} calls/s per client, open loop, all clients at once`,
          columns: COLUMNS,
          rows: rowsOf(figures),
        },
        {
          title: `tRPC: three servers (child processes): healthy 2 s → t0 stops listening for ${downMs / 1000} s (connection refused) → t0 listens again on the same port, ${upMs / 1000} s; ${rate} calls/s per client`,
          columns: COLUMNS,
          rows: rowsOf(trpc.figures),
        },
      ],
      targets,
      notes: [
        '"Time to fail over" = from the kill to the end of the last failed call. "Time to return" = from the restart until the restarted replica first answers this client. The Echo `Unary` method is marked NO_SIDE_EFFECTS, so every client may retry it. grpc-js reconnects to the restarted replica with its own connection backoff (1 s initial, jittered); the Breakwater router and routing channel (`createRoutingChannel`, round-robin, one attempt per target then fail-over, circuits of 3 failures / 1 s) send a replica one recovery call after its 1 s circuit cooldown.',
        'tRPC has no client of its own that knows several servers, so its peers (httpBatchLink alone, and tRPC `retryLink` configured as its docs show) call t0 only and fail while it is down; Breakwater `routingLink` spreads calls round-robin over three `httpBatchLink`s (one call per request), one attempt per server then fail-over, a circuit per server (3 failures, 1 s cooldown, then one recovery call).',
      ],
      data: {
        report: run.report,
        figures,
        trpc: { report: trpc.run.report, figures: trpc.figures },
      },
    };
  },
};
