/**
 * The clients of the `partial` suite, side by side: the peers a user has
 * without Breakwater, and Breakwater as its READMEs set it up. Every call has
 * a 1 s deadline; the gRPC lanes share one address list of three replicas,
 * the tRPC lanes three servers.
 */

import type { ChaosTrpcRouter } from '@breakwater/chaos';
import { chaosTrpcHealthProbe, loadEchoPackageDefinition } from '@breakwater/chaos';
import { createRetryBudget, STANDARD_RESILIENCE } from '@breakwater/core';
import type { RouteHedge } from '@breakwater/core/types';
import {
  createRoutingChannel,
  disableGrpcRetries,
  idempotentMethods,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import { grpcHealthProbe } from '@breakwater/grpc-js/health';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { routingLink } from '@breakwater/trpc';
import type { TRPCLink } from '@trpc/client';
import { observable } from '@trpc/server/observable';
import { createChannel, createClientFactory, Status } from 'nice-grpc';
import { deadlineMiddleware } from 'nice-grpc-client-middleware-deadline';
import { retryMiddleware } from 'nice-grpc-client-middleware-retry';
import {
  grpcLane,
  grpcServiceConfig,
  type Lane,
  multiTarget,
  type NiceEcho,
  niceDefinition,
  niceLane,
  trpcLane,
  trpcRetryLinks,
  trpcTerminal,
} from '../clients.js';

/** Every call's deadline, ms. */
export const DEADLINE_MS = 1_000;
/** Breakwater's hedge, as the demo and the READMEs show it. */
const HEDGE: RouteHedge = { delayMs: 150, attempts: 2 };
const budget = () => createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 });

/** Which lanes are peers (the goal rows compare Breakwater with the best of these). */
export const isPeer = (lane: string) => !lane.startsWith('Breakwater');
/** The protocol of a lane, by its name. */
export const protocolOf = (lane: string) => (/tRPC|routingLink/.test(lane) ? 'trpc' : 'grpc');

function routingChannelLane(name: string, addresses: readonly string[], hedged: boolean): Lane {
  const channel = createRoutingChannel({
    targets: addresses.map((address, i) => ({ id: `r${i}`, address })),
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    health: { probe: grpcHealthProbe },
    ...(hedged ? { hedge: HEDGE, budget: budget() } : {}),
  });
  return {
    ...grpcLane(name, 'routed', { channelOverride: channel }, DEADLINE_MS),
    close: () => channel.close(),
  };
}

/** nice-grpc over grpc-js round_robin, with `middleware` and a 1 s deadline on every call. */
function niceRoundRobinLane(
  name: string,
  target: string,
  build: (
    factory: ReturnType<typeof createClientFactory>,
  ) => ReturnType<typeof createClientFactory>,
  options: Record<string, unknown>,
): Lane {
  const channel = createChannel(target, undefined, {
    ...grpcServiceConfig({ roundRobin: true }),
    ...disableGrpcRetries,
  });
  const client = build(createClientFactory()).create(
    niceDefinition(),
    channel,
  ) as unknown as NiceEcho;
  return niceLane(name, channel, client, options, { 'grpc-timeout': `${DEADLINE_MS}m` });
}

/** One terminating link per server, taken in turn: what DNS round-robin gives a tRPC client. */
function roundRobinLink(links: readonly TRPCLink<ChaosTrpcRouter>[]): TRPCLink<ChaosTrpcRouter> {
  return (runtime) => {
    const ready = links.map((l) => l(runtime));
    let next = 0;
    return (opts) =>
      observable((observer) => {
        const link = ready[next++ % ready.length];
        const sub = link?.({ ...opts, next: () => observable(() => {}) }).subscribe(observer);
        return () => sub?.unsubscribe();
      });
  };
}

function routingLinkLane(
  name: string,
  servers: ReadonlyArray<{ id: string; url: string }>,
  hedged: boolean,
): Lane {
  const links = [
    routingLink<ChaosTrpcRouter>({
      endpoints: servers.map((s) => ({ id: s.id, link: trpcTerminal(s.url, 1) })),
      protection: { circuit: STANDARD_RESILIENCE.circuit },
      health: { probe: chaosTrpcHealthProbe(servers), failureThreshold: Number.MAX_SAFE_INTEGER },
      ...(hedged ? { hedge: HEDGE, budget: budget() } : {}),
    }),
  ];
  return trpcLane(name, links, DEADLINE_MS);
}

/** Every lane of one run, gRPC first. */
export function partialLanes(
  grpcAddresses: readonly string[],
  trpcServers: ReadonlyArray<{ id: string; url: string }>,
): Lane[] {
  const target = multiTarget(grpcAddresses);
  const rr = (parts: Parameters<typeof grpcServiceConfig>[0] = {}) =>
    grpcServiceConfig({ roundRobin: true, ...parts });
  const idempotent = idempotentMethods(loadEchoPackageDefinition());
  const terminals = () => trpcServers.map((s) => trpcTerminal(s.url, 1));
  return [
    grpcLane('grpc-js round_robin', target, rr(), DEADLINE_MS),
    grpcLane('grpc-js round_robin + retryPolicy', target, rr({ retry: true }), DEADLINE_MS),
    grpcLane(
      'grpc-js round_robin + hedgingPolicy',
      target,
      rr({ hedgeDelayMs: 150, hedgeAttempts: 3 }),
      DEADLINE_MS,
    ),
    niceRoundRobinLane(
      'nice-grpc + retry + deadline middleware',
      target,
      (f) => f.use(retryMiddleware).use(deadlineMiddleware),
      {
        deadline: DEADLINE_MS,
        retry: true,
        retryMaxAttempts: 2,
        retryBaseDelayMs: 50,
        retryableStatuses: [Status.UNAVAILABLE],
      },
    ),
    routingChannelLane('Breakwater routing channel', grpcAddresses, false),
    routingChannelLane('Breakwater routing channel + hedge + budget', grpcAddresses, true),
    grpcLane(
      'Breakwater resilienceInterceptor over round_robin',
      target,
      { ...rr(), ...disableGrpcRetries, interceptors: [resilienceInterceptor({ idempotent })] },
      DEADLINE_MS,
    ),
    niceRoundRobinLane(
      'Breakwater nice-grpc resilienceMiddleware',
      target,
      (f) => f.use(resilienceMiddleware({ idempotent, timeoutMs: DEADLINE_MS })),
      {},
    ),
    trpcLane(
      'tRPC retryLink over round-robin links',
      trpcRetryLinks(roundRobinLink(terminals())),
      DEADLINE_MS,
    ),
    routingLinkLane('Breakwater routingLink', trpcServers, false),
    routingLinkLane('Breakwater routingLink + hedge + budget', trpcServers, true),
  ];
}
