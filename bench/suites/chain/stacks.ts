/**
 * The chains side by side: A → B → C → D built with the peers' retries
 * (grpc-js `retryPolicy` on every hop, tRPC `retryLink` on every hop; 3
 * attempts per hop, no propagation) and with Breakwater, mixing its three
 * adapters on both sides of the wire.
 */
import type { Hop } from '../../harness/chain-figures.js';
import type { ClientKind } from './outbound.js';
import type { ServerKind } from './service.js';

/** One service of a stack: its server, and the client it calls the next hop with (none for D). */
export interface StackHop {
  server: ServerKind;
  client?: ClientKind;
}

/** A chain of four services. */
export interface ChainStack {
  name: string;
  /** Breakwater's (its servers bound, its clients Breakwater's); the goals apply to it. */
  breakwater: boolean;
  hops: Record<Hop, StackHop>;
}

const uniform = (server: ServerKind, client: ClientKind): Record<Hop, StackHop> => ({
  A: { server, client },
  B: { server, client },
  C: { server, client },
  D: { server },
});

/** The stacks, in table order. */
export const STACKS: ChainStack[] = [
  {
    name: 'grpc-js retryPolicy (3 attempts per hop)',
    breakwater: false,
    hops: uniform('grpc-js', 'grpc-js retryPolicy'),
  },
  {
    name: 'tRPC retryLink (3 attempts per hop)',
    breakwater: false,
    hops: uniform('tRPC', 'tRPC retryLink'),
  },
  {
    name: 'Breakwater: grpc-js → nice-grpc → tRPC → grpc-js',
    breakwater: true,
    hops: {
      A: { server: 'grpc-js', client: 'Breakwater grpc-js' },
      B: { server: 'nice-grpc', client: 'Breakwater tRPC' },
      C: { server: 'tRPC', client: 'Breakwater nice-grpc' },
      D: { server: 'grpc-js' },
    },
  },
];
