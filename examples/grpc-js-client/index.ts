// A grpc-js Echo client routed over three replicas. The primary goes down and
// comes back; the third replica reports NOT_SERVING to health checks. The
// client, built from `resilienceInterceptor` on a routing channel, fails no call.
// Run: pnpm start (in this folder).
import { pathToFileURL } from 'node:url';
import {
  createEchoClient,
  type EchoOutcome,
  echoUnary,
  type GrpcChaosServer,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import {
  createRoutingChannel,
  idempotentMethods,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import { createGrpcHealthProbe } from '@breakwater/grpc-js/health';

/** What the client saw in one phase: calls answered per replica, and failed calls. */
export interface PhaseReport {
  answered: Record<string, number>;
  failed: number;
}

/** Runs the scenario; resolves with what the client saw per phase and what the primary saw. */
export async function main(log: (line: string) => void = console.log) {
  const servers: GrpcChaosServer[] = [];
  for (const replica of ['primary', 'secondary', 'tertiary']) {
    servers.push(await startGrpcChaosServer({ replica }));
  }
  const [primary, secondary, tertiary] = servers as [
    GrpcChaosServer,
    GrpcChaosServer,
    GrpcChaosServer,
  ];
  const probe = createGrpcHealthProbe();
  const channel = createRoutingChannel({
    targets: servers.map((s) => ({
      id: s.replica,
      address: s.address,
      // Reconnect quickly once a replica is back (grpc-js waits ≥ 1 s by default).
      options: { 'grpc.initial_reconnect_backoff_ms': 50, 'grpc.max_reconnect_backoff_ms': 200 },
    })),
    // Unary Echo is `idempotency_level = NO_SIDE_EFFECTS` in the proto: safe to fail over.
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    selection: { type: 'priority', priorities: { primary: 2, secondary: 1 } },
    circuit: { failureThreshold: 2, failureSpanMs: 0, openDurationMs: 300 },
    health: { probe, intervalMs: 60_000 },
  });
  const client = createEchoClient('routed', {
    channelOverride: channel,
    // Deadline and bulkhead per call; failover between replicas is the channel's job.
    interceptors: [
      resilienceInterceptor({
        timeoutMs: 2_000,
        concurrency: { limit: 16, maxQueue: 64 },
        // Retries above a routing channel would multiply its failovers: the channel does them.
        retry: false,
        attemptTimeoutMs: false,
        budget: false,
        circuit: false,
      }),
    ],
  });
  const recovered: string[] = [];
  channel.onRecovered((e) => recovered.push(e.providerId));

  const phases: Record<string, PhaseReport> = {};
  const phase = async (name: string, calls: number) => {
    const outcomes: EchoOutcome[] = await Promise.all(
      Array.from({ length: calls }, (_, i) => echoUnary(client, { message: `${name} ${i}` })),
    );
    const report: PhaseReport = { answered: {}, failed: 0 };
    for (const o of outcomes) {
      if (o.ok) report.answered[o.value.replica] = (report.answered[o.value.replica] ?? 0) + 1;
      else report.failed++;
    }
    phases[name] = report;
    log(
      `${name.padEnd(20)} answered by ${JSON.stringify(report.answered)}, failed: ${report.failed}`,
    );
  };

  try {
    tertiary.setHealth('NOT_SERVING');
    // Two failed health checks open the tertiary's circuit: it gets no calls.
    await channel.checkHealth();
    await channel.checkHealth();
    await phase('healthy', 20);
    await primary.stop();
    await phase('primary down', 20);
    await primary.restart();
    // After `reset`, one call probes the primary; once it answers, traffic returns.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await phase('primary back', 1);
    await phase('after recovery', 20);
    log(`recovered: ${recovered.join(', ') || 'none'}; tertiary saw ${tertiary.total()} calls`);
    return {
      phases,
      recovered,
      tertiaryCalls: tertiary.total(),
      secondaryCalls: secondary.total(),
    };
  } finally {
    client.close();
    probe.close();
    await Promise.all(servers.map((s) => s.close()));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main();
}
