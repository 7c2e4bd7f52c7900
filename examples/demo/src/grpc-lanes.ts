import {
  echoClientConstructor,
  echoUnary,
  loadEchoPackageDefinition,
  type ScenarioClient,
} from '@breakwater/chaos';
import { createRetryBudget, type Telemetry } from '@breakwater/core';
import { createRoutingChannel, idempotentMethods } from '@breakwater/grpc-js';
import { grpcHealthProbe } from '@breakwater/grpc-js/health';
import { type Client, credentials, status } from '@grpc/grpc-js';
import { CALL_DEADLINE_MS } from './lanes.js';

type EchoClient = Parameters<typeof echoUnary>[0];

/** The gRPC clients compared side by side, each over the same three replicas. */
export interface GrpcLanes {
  lanes: ScenarioClient[];
  close(): void;
}

const ECHO = 'breakwater.chaos.v1.Echo';

/** grpc-js's own round_robin over every replica address: what a multi-address target gives. */
function roundRobinConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }], ...extra });
}

/**
 * Today's usual setup: the service-config `retryPolicy` from the gRPC retry
 * guide (3 attempts, exponential backoff from 100 ms, retry `UNAVAILABLE`).
 */
const usualRetryPolicy = {
  methodConfig: [
    {
      name: [{ service: ECHO }],
      retryPolicy: {
        maxAttempts: 3,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 2,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

/**
 * grpc-js's own hedging (gRFC A6 `hedgingPolicy`): up to 3 attempts of a call
 * in flight, the next one 150 ms after the last (Breakwater's hedge delay), and
 * an `UNAVAILABLE` answer starts the next attempt at once; round_robin sends
 * each attempt to the next replica. The method is idempotent, as hedging requires.
 */
export const HEDGING_POLICY = {
  methodConfig: [
    {
      name: [{ service: ECHO }],
      hedgingPolicy: {
        maxAttempts: 3,
        hedgingDelay: '0.15s',
        nonFatalStatusCodes: ['UNAVAILABLE'],
      },
    },
  ],
};

function lane(name: string, client: EchoClient): ScenarioClient {
  return {
    name,
    async call({ callId, index }) {
      const out = await echoUnary(
        client,
        { message: String(index) },
        { callId, callOptions: { deadline: Date.now() + CALL_DEADLINE_MS } },
      );
      if (!out.ok) throw out.error;
      return { replica: out.value.replica };
    },
    describeError: (e) => status[(e as { code: number }).code] ?? String(e),
  };
}

type Replicas = ReadonlyArray<{ id: string; address: string }>;

/**
 * Breakwater as the @breakwater/grpc-js README sets up a routing channel:
 * one channel per replica (each with eagerReconnect, which the routing
 * channel applies to the channels it creates), the standard circuit per
 * replica (circuit left out: STANDARD_RESILIENCE.circuit, a probe every
 * 200 ms while open), grpc.health.v1 checks at the README's defaults (a
 * passing check half-opens a circuit at once), the default load-aware
 * selection (least-loaded: of two random healthy replicas, the lower
 * peak-EWMA latency x calls in flight), failover, hedging of attempts slower
 * than 150 ms, and a retry budget that caps failovers and hedges at about
 * 20% extra. With `adaptive`, each replica also gets its own adaptive
 * concurrency limit (`concurrency: { adaptive: true }`): a replica at its limit
 * is passed over, and a call every replica's limit refuses ends with
 * `RESOURCE_EXHAUSTED` unsent.
 */
function breakwaterRouting(
  replicas: Replicas,
  { telemetry, adaptive = false }: { telemetry?: Telemetry; adaptive?: boolean } = {},
) {
  return createRoutingChannel({
    targets: replicas.map((r) => ({ id: r.id, address: r.address })),
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    hedge: { delayMs: 150, attempts: 2 },
    health: { probe: grpcHealthProbe },
    budget: createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 }),
    ...(telemetry === undefined ? {} : { telemetry }),
    ...(adaptive ? { concurrency: { adaptive: true } } : {}),
  });
}

/**
 * Builds the gRPC lanes: no resilience, grpc-js retries, grpc-js hedging,
 * Breakwater (reporting to `telemetry`, when given) and, with `adaptive`,
 * Breakwater's routing channel with an adaptive concurrency limit per replica.
 */
export function createGrpcLanes(
  replicas: Replicas,
  telemetry?: Telemetry,
  { adaptive = false }: { adaptive?: boolean } = {},
): GrpcLanes {
  const Echo = echoClientConstructor();
  const target = `ipv4:${replicas.map((r) => r.address).join(',')}`;
  const insecure = credentials.createInsecure();
  const none = new Echo(target, insecure, {
    'grpc.service_config': roundRobinConfig(),
  }) as unknown as EchoClient;
  const usual = new Echo(target, insecure, {
    'grpc.service_config': roundRobinConfig(usualRetryPolicy),
  }) as unknown as EchoClient;
  const hedging = new Echo(target, insecure, {
    'grpc.service_config': roundRobinConfig(HEDGING_POLICY),
  }) as unknown as EchoClient;
  const routing = breakwaterRouting(replicas, telemetry === undefined ? {} : { telemetry });
  const breakwater = new Echo('routed', insecure, {
    channelOverride: routing,
  }) as unknown as EchoClient;
  const clients: Client[] = [none, usual, hedging, breakwater];
  const routings = [routing];
  const lanes = [
    lane('grpc/none', none),
    lane('grpc/usual', usual),
    lane('grpc/hedging', hedging),
    lane('grpc/breakwater', breakwater),
  ];
  if (adaptive) {
    const own = breakwaterRouting(replicas, { adaptive: true });
    const client = new Echo('routed', insecure, { channelOverride: own }) as unknown as EchoClient;
    clients.push(client);
    routings.push(own);
    lanes.push(lane('grpc/breakwater-adaptive', client));
  }
  return {
    lanes,
    close() {
      for (const c of clients) c.close();
      for (const r of routings) r.close();
    },
  };
}
