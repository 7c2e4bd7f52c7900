import {
  createEchoClient,
  type EchoClient,
  type GrpcChaosServer,
  type GrpcChaosServerOptions,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import type { ChannelOptions } from '@grpc/grpc-js';
import { afterEach } from 'vitest';
import {
  createRoutingChannel,
  type RoutingChannel,
  type RoutingChannelOptions,
} from '../src/index.js';

/** Reconnect quickly after a replica comes back (grpc-js backs off ≥ 1 s by default). */
export const FAST_RECONNECT: ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 50,
  'grpc.max_reconnect_backoff_ms': 200,
};

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/**
 * Servers `replica-1..n`, a routing channel over them and a plain grpc-js Echo
 * client on it; all closed after the test. The servers are in preference order
 * (`selection: 'priority'`) unless `options.selection` says otherwise: these
 * tests follow calls from a preferred target to the next.
 */
export async function routingSetup(
  servers: readonly GrpcChaosServerOptions[],
  options: Omit<RoutingChannelOptions, 'targets'> = {},
): Promise<{ servers: GrpcChaosServer[]; channel: RoutingChannel; client: EchoClient }> {
  const started = await Promise.all(
    servers.map((s, i) => startGrpcChaosServer({ replica: `replica-${i + 1}`, ...s })),
  );
  cleanup.push(() => Promise.all(started.map((s) => s.close())));
  const channel = createRoutingChannel({
    selection: 'priority',
    ...options,
    targets: started.map((s) => ({ id: s.replica, address: s.address, options: FAST_RECONNECT })),
  });
  cleanup.push(() => channel.close());
  // The address is ignored: every call goes through the routing channel.
  const client = createEchoClient('routed', { channelOverride: channel });
  cleanup.push(() => client.close());
  return { servers: started, channel, client };
}

/** Replicas that answered, in call order. */
export function replicas(
  outcomes: ReadonlyArray<{ value?: { replica: string } | undefined }>,
): string[] {
  return outcomes.map((o) => o.value?.replica ?? 'failed');
}
