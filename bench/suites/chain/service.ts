/**
 * One service of a chain, as its child process runs it: a server of one
 * kind, the client to the next hop, and what the server recorded.
 */
import type { Hop, HopRecord } from '../../harness/chain-figures.js';
import type { ServerBindings } from './bindings.js';
import { type Downstream, hopHandler, type LeafMode } from './hop.js';
import { type ClientKind, downstream } from './outbound.js';
import { type HopServer, startGrpcJsHop, startNiceGrpcHop, startTrpcHop } from './servers.js';

/** The server kinds a service can be. */
export type ServerKind = 'grpc-js' | 'nice-grpc' | 'tRPC';

/** One service of a chain, as the child process gets it (JSON). */
export interface ServiceSpec {
  hop: Hop;
  server: ServerKind;
  /** Breakwater's server binding on the server. */
  bound: boolean;
  /** The client to the next hop; absent for D. */
  client?: ClientKind;
  /** The next hop's address; absent for D. */
  next?: string;
}

/** A running service: its address, and a reset between scenarios. */
export interface Service {
  address: string;
  /** Forgets the records and the client's state (fresh budgets and circuits); D answers by `mode`. */
  reset(mode: LeafMode): void;
  records(): HopRecord[];
  close(): Promise<void>;
}

const START = { 'grpc-js': startGrpcJsHop, 'nice-grpc': startNiceGrpcHop, tRPC: startTrpcHop };

/** Starts the service `spec` describes (`bindings`: Breakwater's, when `spec.bound`). */
export async function startService(
  spec: ServiceSpec,
  bindings: ServerBindings | undefined,
): Promise<Service> {
  const records: HopRecord[] = [];
  let mode: LeafMode = 'ok';
  const connect = () => (spec.client && spec.next ? downstream(spec.client, spec.next) : undefined);
  let next: Downstream | undefined = connect();
  let handler = hopHandler(
    spec.hop,
    () => next,
    () => mode,
  );
  const server: HopServer = await START[spec.server](
    spec.hop,
    (rootId, signal) => handler(rootId, signal),
    records,
    spec.bound ? bindings : undefined,
  );
  return {
    address: server.address,
    reset(m) {
      mode = m;
      records.length = 0;
      next?.close();
      next = connect();
      handler = hopHandler(
        spec.hop,
        () => next,
        () => mode,
      );
    },
    records: () => records,
    async close() {
      next?.close();
      await server.close();
    },
  };
}
