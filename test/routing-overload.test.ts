import {
  type CapacitySpec,
  type ChaosTrpcRouter,
  capacityPerSecond,
  createChaosTrpcServer,
  createEchoClient,
  echoUnary,
  goodputPerSecond,
  loadEchoPackageDefinition,
  type OfferedCall,
  offerCalls,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import { isConcurrencyLimitError, type Telemetry } from '@breakwater/core';
import { systemClock } from '@breakwater/core/time';
import type { AdaptiveLimiter } from '@breakwater/core/types';
import { breakwaterCause, createRoutingChannel, idempotentMethods } from '@breakwater/grpc-js';
import { createStatusPreservingFetch, routingLink } from '@breakwater/trpc';
import { type ServiceError, status } from '@grpc/grpc-js';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { afterEach, describe, expect, it } from 'vitest';

// Issue 34: the per-provider adaptive limit of the two routing entry points, against two real
// servers of fixed capacity, one saturated. 2 workers × 50 ms: the saturated one answers 40
// calls a second (50 ms of work is long enough that a busy runner's event-loop stalls are not
// most of what the limits read).
const SATURATED: CapacitySpec = { workers: 2, serviceMs: 50 };
const DURATION_MS = 3_000;
const DEADLINE_MS = 1_000;
/** The first second is the limits' convergence from their initial 20. */
const SETTLED = { fromMs: 1_000, toMs: DURATION_MS };
/** The saturated server is preferred, so only its limit, not load-aware selection, moves calls off it. */
const PREFER_SATURATED = { type: 'priority', priorities: { saturated: 2, healthy: 1 } } as const;

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** What a server saw: the calls it received and the most it held at once (served or queued). */
interface Seen {
  received: number;
  peakInFlight: number;
}

/** One routing entry point over a saturated and a healthy server of fixed capacity. */
interface TwoServers {
  /** One call with a 1 s deadline; rejects with the framework's error. */
  call(): Promise<unknown>;
  /** The entry point's limits, one per server, as its telemetry hook hands them out. */
  limiters: AdaptiveLimiter[];
  seen(): { saturated: Seen; healthy: Seen };
  /** The framework's name of a refusal's status. */
  code(error: unknown): string | undefined;
}

/** A telemetry that only collects the adaptive limiters (one per provider). */
function limiterCollector(limiters: AdaptiveLimiter[]): Telemetry {
  return { startCall: () => undefined, concurrencyLimit: (l) => limiters.push(l) };
}

async function grpcRoutingChannel(healthy: CapacitySpec): Promise<TwoServers> {
  const servers = await Promise.all([
    startGrpcChaosServer({ replica: 'saturated', capacity: SATURATED }),
    startGrpcChaosServer({ replica: 'healthy', capacity: healthy }),
  ]);
  cleanup.push(() => Promise.all(servers.map((s) => s.close())));
  const limiters: AdaptiveLimiter[] = [];
  const channel = createRoutingChannel({
    targets: servers.map((s) => ({ id: s.replica, address: s.address })),
    selection: PREFER_SATURATED,
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    concurrency: { adaptive: true },
    telemetry: limiterCollector(limiters),
  });
  cleanup.push(() => channel.close());
  const client = createEchoClient('routed', { channelOverride: channel });
  cleanup.push(() => client.close());
  const seen = (i: number): Seen => ({
    received: servers[i]?.total() ?? 0,
    peakInFlight: servers[i]?.capacityStats().peakInFlight ?? 0,
  });
  return {
    async call() {
      const deadline = systemClock() + DEADLINE_MS;
      const o = await echoUnary(client, { message: 'x' }, { callOptions: { deadline } });
      if (!o.ok) throw o.error;
    },
    limiters,
    seen: () => ({ saturated: seen(0), healthy: seen(1) }),
    code: (error) => status[(error as ServiceError).code],
  };
}

async function trpcRoutingLink(healthy: CapacitySpec): Promise<TwoServers> {
  const servers = await Promise.all([
    createChaosTrpcServer({ name: 'saturated', capacity: SATURATED }),
    createChaosTrpcServer({ name: 'healthy', capacity: healthy }),
  ]);
  cleanup.push(() => Promise.all(servers.map((s) => s.close())));
  const limiters: AdaptiveLimiter[] = [];
  const client = createTRPCClient<ChaosTrpcRouter>({
    links: [
      routingLink<ChaosTrpcRouter>({
        // One HTTP request per query (httpLink): each takes one place in a server's queue.
        endpoints: servers.map((s) => ({
          id: s.name,
          link: httpLink({ url: s.url, fetch: createStatusPreservingFetch() }),
        })),
        selection: PREFER_SATURATED,
        timeoutMs: DEADLINE_MS,
        concurrency: { adaptive: true },
        telemetry: limiterCollector(limiters),
      }),
    ],
  });
  const seen = (i: number): Seen => ({
    received: servers[i]?.stats().requests ?? 0,
    peakInFlight: servers[i]?.capacityStats().peakInFlight ?? 0,
  });
  return {
    call: () => client.echo.query('x'),
    limiters,
    seen: () => ({ saturated: seen(0), healthy: seen(1) }),
    code: (error) =>
      error instanceof TRPCClientError ? (error.data as { code?: string })?.code : undefined,
  };
}

/** The core error under a framework's error (the routing channel's status, tRPC's client error). */
const coreCause = (error: unknown) =>
  breakwaterCause(error) ?? (error instanceof TRPCClientError ? error.cause : undefined);
const isRefusal = (c: OfferedCall) => isConcurrencyLimitError(coreCause(c.error));

/**
 * Offers `rate` calls a second for 3 s through `setup`; counts the refusals that came while a
 * server's limit still had room (read as the refusal arrives: no answer, which frees a slot,
 * can come in between).
 */
async function offer(setup: TwoServers, rate: number) {
  let refusedWithRoom = 0;
  const calls = await offerCalls({
    rate,
    durationMs: DURATION_MS,
    call: () =>
      setup.call().catch((error: unknown) => {
        const room = setup.limiters.some((l) => l.hasRoom('default'));
        if (isConcurrencyLimitError(coreCause(error)) && room) refusedWithRoom++;
        throw error;
      }),
  });
  expect(setup.limiters).toHaveLength(2);
  const refused = calls.filter(isRefusal);
  return {
    calls,
    refused,
    refusedWithRoom,
    // Once the limits converged, no call waits in the saturated queue past its deadline.
    lateFailures: calls.filter((c) => c.startedAtMs >= SETTLED.fromMs && !c.ok && !isRefusal(c)),
    ...setup.seen(),
  };
}

describe.each([
  { entry: 'grpc-js routing channel', start: grpcRoutingChannel, refusal: 'RESOURCE_EXHAUSTED' },
  { entry: 'tRPC routingLink', start: trpcRoutingLink, refusal: 'TOO_MANY_REQUESTS' },
])(
  '$entry concurrency.adaptive: one limit per server, one server saturated',
  ({ start, refusal }) => {
    it('below the two servers’ capacity: the saturated one holds a bounded number of calls, the rest go to the healthy one, refused only when both are full', async () => {
      // 8 workers × 50 ms: 160 calls a second; 100 offered is 2.5× what the saturated one answers.
      const rate = 2.5 * capacityPerSecond(SATURATED);
      const run = await offer(await start({ workers: 8, serviceMs: 50 }), rate);

      // A server at its limit is passed over, not a reason to refuse while another has room: a
      // refusal needs both limits full at once (a burst of more calls than the healthy one's
      // limit admits, 18 of its 20, which only an event-loop stall of a busy runner makes).
      expect(run.refusedWithRoom).toBe(0);
      expect(run.lateFailures).toEqual([]);
      // What the servers saw: the saturated one never held more than the limit's initial 20
      // (without the limit its queue grows by 60 calls a second), and got its share only.
      expect(run.saturated.peakInFlight).toBeLessThanOrEqual(20);
      expect(run.saturated.received + run.healthy.received).toBe(
        run.calls.length - run.refused.length,
      );
      const saturatedMost = (capacityPerSecond(SATURATED) * DURATION_MS) / 1_000 + 20;
      expect(run.saturated.received).toBeLessThan(saturatedMost);
      expect(run.healthy.received).toBeGreaterThan(run.calls.length / 2);
      // About what was offered (measured: all of it on a quiet run).
      expect(goodputPerSecond(run.calls, SETTLED)).toBeGreaterThanOrEqual(0.85 * rate);
    }, 20_000);

    it(`at 3× the two servers’ capacity: goodput at least the healthy one’s capacity, the excess refused with ${refusal}, never sent`, async () => {
      const healthy: CapacitySpec = { workers: 4, serviceMs: 50 };
      const capacity = capacityPerSecond(SATURATED) + capacityPerSecond(healthy);
      const setup = await start(healthy);
      const run = await offer(setup, 3 * capacity);

      expect(run.refused.length).toBeGreaterThan(run.calls.length / 3);
      expect(new Set(run.refused.map((c) => setup.code(c.error)))).toEqual(new Set([refusal]));
      expect(run.refusedWithRoom).toBe(0);
      expect(run.lateFailures).toEqual([]);
      // What the servers saw: a refused call reached neither; neither queue grew past the limit.
      expect(run.saturated.received + run.healthy.received).toBe(
        run.calls.length - run.refused.length,
      );
      expect(run.saturated.peakInFlight).toBeLessThanOrEqual(20);
      expect(run.healthy.peakInFlight).toBeLessThanOrEqual(20);
      expect(goodputPerSecond(run.calls, SETTLED)).toBeGreaterThanOrEqual(
        capacityPerSecond(healthy),
      );
    }, 20_000);
  },
);
