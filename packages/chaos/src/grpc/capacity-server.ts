import { systemSleep } from '@breakwater/core/time';
import { loadPackageDefinition, Server, ServerCredentials } from '@grpc/grpc-js';
import { type EchoRequest, loadEchoPackageDefinition } from './echo-proto.js';

/** Options of {@link startGrpcCapacityServer}. */
export interface GrpcCapacityServerOptions {
  /** Calls served at once; an integer >= 1. Required. */
  workers: number;
  /** Time each call takes to serve, in ms. Required. */
  serviceMs: number;
  /** Port to listen on (127.0.0.1). Defaults to 0: any free port. */
  port?: number;
}

/** A running {@link startGrpcCapacityServer}. */
export interface GrpcCapacityServer {
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** Calls the server received (served or still queued). */
  received(): number;
  /** Most calls that waited in the queue at once. */
  maxQueued(): number;
  /** Changes the number of workers from now on (a server losing or regaining capacity). */
  setWorkers(workers: number): void;
  /** Stops at once, failing calls in flight. */
  close(): Promise<void>;
}

interface EchoPackage {
  breakwater: { chaos: { v1: { Echo: { service: Parameters<Server['addService']>[0] } } } };
}

/**
 * An Echo server (`Unary` only) with a fixed capacity: `workers` calls are
 * served at once, each for `serviceMs`; the rest wait in an unbounded FIFO
 * queue, as a saturated server's accept queue does. Offered more than
 * `workers × 1000 / serviceMs` calls a second, its latency grows without
 * bound: the server an adaptive concurrency limit protects.
 * @example
 * const server = await startGrpcCapacityServer({ workers: 4, serviceMs: 20 });
 */
export async function startGrpcCapacityServer(
  options: GrpcCapacityServerOptions,
): Promise<GrpcCapacityServer> {
  let workers = options.workers;
  let busy = 0;
  let received = 0;
  let maxQueued = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    while (busy < workers && queue.length > 0) queue.shift()?.();
  };
  const serve = (answer: () => void) => {
    busy++;
    void systemSleep(options.serviceMs).then(() => {
      busy--;
      answer();
      next();
    });
  };
  const pkg = loadPackageDefinition(loadEchoPackageDefinition()) as unknown as EchoPackage;
  const server = new Server();
  server.addService(pkg.breakwater.chaos.v1.Echo.service, {
    Unary(
      call: { request: EchoRequest },
      callback: (error: null, response: { message: string; replica: string }) => void,
    ) {
      received++;
      const answer = () =>
        callback(null, { message: call.request.message ?? '', replica: 'capacity' });
      queue.push(() => serve(answer));
      maxQueued = Math.max(maxQueued, queue.length - Math.max(0, workers - busy));
      next();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${options.port ?? 0}`,
      ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    received: () => received,
    maxQueued: () => maxQueued,
    setWorkers(n) {
      workers = n;
      next();
    },
    close: async () => server.forceShutdown(),
  };
}
