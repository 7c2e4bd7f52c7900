import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Clock,
  type RandomSource,
  type Sleep,
  systemClock,
  systemSleep,
} from '@breakwater/core/time';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { type CapacitySpec, type CapacityStats, capacitySetting } from '../grpc/capacity.js';
import { faultRandomness } from '../grpc/seeded-random.js';
import { checkFaultPlan, decideFault, type TrpcFaultPlan } from './faults.js';
import { type ChaosTrpcStats, TrpcRecorder } from './recorder.js';
import { writeInjectedError } from './responses.js';
import { type ChaosTrpcContext, chaosTrpcRouter } from './router.js';
import { cutStreamAfter } from './stream-drop.js';

/** Options of {@link createChaosTrpcServer}. */
export interface ChaosTrpcServerOptions {
  /** Server name, sent as `x-chaos-server` and in `echo` answers. Defaults to `'trpc'`. */
  name?: string;
  /** Port to listen on; 0 picks a free one (kept across `stop()`/`start()`). Defaults to 0. */
  port?: number;
  /** Interface to listen on. Defaults to `'127.0.0.1'`. */
  host?: string;
  /** Initial fault schedule; change it later with `setFaults`. Defaults to no faults. */
  faults?: TrpcFaultPlan;
  /**
   * Seed of the fault randomness, so a run replays. A request with an `x-call-id` draws
   * from `(seed, call index, attempt)` alone, so every client meets the same faults for
   * the same call; requests without one share one seeded sequence. Defaults to 1.
   */
  seed?: number;
  /** Randomness source shared by every request; overrides `seed`. Defaults to draws from `seed`. */
  random?: RandomSource;
  /** How added latency waits. Defaults to `systemSleep`. */
  sleep?: Sleep;
  /**
   * Answers cross-origin requests from any origin (CORS, preflights included and
   * not counted in the stats), so a page served elsewhere can call it. Defaults to false.
   */
  cors?: boolean;
  /** Time source of `observed[].receivedAt`. Defaults to `systemClock`. */
  clock?: Clock;
  /**
   * A fixed capacity in front of every procedure request: `workers` requests
   * served at once, `serviceMs` each, the rest queued FIFO (see
   * {@link CapacitySpec}); a request beyond a full `queue` gets 429
   * `TOO_MANY_REQUESTS`. Faults apply after a request was served. Defaults to
   * none (every request served at once).
   */
  capacity?: CapacitySpec;
}

/** Path of the chaos tRPC server's health endpoint. */
export const TRPC_HEALTH_PATH = '/healthz';

/** A running chaos tRPC server. */
export interface ChaosTrpcServer {
  /** Name given in the options. */
  readonly name: string;
  /** The port, fixed after the first start. */
  readonly port: number;
  /** Base URL for `httpBatchLink({ url })`. */
  readonly url: string;
  /** Whether the listener is open (false after `stop()`: connections are refused). */
  readonly listening: boolean;
  /**
   * Replaces the fault schedule; applies to requests that arrive afterwards.
   * Its `notServing` sets what `/healthz` says, pushed to its watchers at once.
   */
  setFaults(faults: TrpcFaultPlan): void;
  /** A copy of what the server saw since start or `resetStats()`. */
  stats(): ChaosTrpcStats;
  /** Clears the counts (not the counter procedure's value), the capacity's too. */
  resetStats(): void;
  /** Sets the capacity (`undefined`: unlimited from now on; requests already queued are still served). */
  setCapacity(spec: CapacitySpec | undefined): void;
  /** What the capacity did since the server started or `resetStats()`; all zero without one. */
  capacityStats(): CapacityStats;
  /** Closes the listener and every open connection: clients get ECONNREFUSED. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  /** Stops for good (same as `stop()`). */
  close(): Promise<void>;
  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Sets the CORS headers; answers a preflight itself and returns true for one. */
function allowCrossOrigin(req: IncomingMessage, res: ServerResponse): boolean {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', '*');
  if (req.method !== 'OPTIONS') return false;
  res.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
  res.setHeader(
    'access-control-allow-headers',
    req.headers['access-control-request-headers'] ?? '*',
  );
  res.writeHead(204).end();
  return true;
}

/** Procedure paths in a tRPC URL (`/a,b?batch=1` → `['a', 'b']`). */
function procedurePaths(url: URL): string[] {
  return decodeURIComponent(url.pathname)
    .replace(/^\/+|\/+$/g, '')
    .split(',')
    .filter((p) => p.length > 0);
}

/**
 * Starts a tRPC standalone server with {@link chaosTrpcRouter} behind a
 * fault-injecting HTTP layer on `127.0.0.1` and resolves once it listens.
 * @example
 * const server = await createChaosTrpcServer({ faults: { failFirst: 2 } });
 * try { ... } finally { await server.close(); }
 */
export async function createChaosTrpcServer(
  options: ChaosTrpcServerOptions = {},
): Promise<ChaosTrpcServer> {
  const name = options.name ?? 'trpc';
  const host = options.host ?? '127.0.0.1';
  const randomFor = faultRandomness(options.seed ?? 1, options.random);
  const sleep = options.sleep ?? systemSleep;
  const clock = options.clock ?? systemClock;
  let plan: TrpcFaultPlan = options.faults ?? {};
  checkFaultPlan(plan);
  let streamsDropped = 0;
  const capacity = capacitySetting(options.capacity, clock, sleep);
  const recorder = new TrpcRecorder(name);
  const context: ChaosTrpcContext = {
    server: name,
    state: { counter: 0, subscriptionStarts: recorder.subscriptionStarts },
  };
  const trpc = createHTTPHandler({ router: chaosTrpcRouter, createContext: () => context });

  /** Open `/healthz` event streams, each told every status change. */
  const watchers = new Set<ServerResponse>();
  const healthStatus = () => (plan.notServing === true ? 'NOT_SERVING' : 'SERVING');
  /**
   * `GET|HEAD /healthz`: 200 `SERVING` or 503 `NOT_SERVING`; with `accept:
   * text/event-stream`, a stream of `data: <status>` events, the current one
   * first (a health watch). Not counted as attempts.
   */
  const health = (req: IncomingMessage, res: ServerResponse) => {
    if ((req.headers.accept ?? '').includes('text/event-stream')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write(`data: ${healthStatus()}\n\n`);
      watchers.add(res);
      res.once('close', () => watchers.delete(res));
      return;
    }
    const status = healthStatus();
    res.writeHead(status === 'SERVING' ? 200 : 503, { 'content-type': 'text/plain' });
    res.end(req.method === 'HEAD' ? undefined : status);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://chaos.invalid');
    if (url.pathname === TRPC_HEALTH_PATH) {
      health(req, res);
      return;
    }
    const paths = procedurePaths(url);
    const sentId = req.headers['x-call-id'] as string | undefined;
    const callId = sentId ?? `${req.method} ${req.url}`;
    const record = recorder.request(paths, callId, clock());
    const attempt = record.attempt;
    res.once('close', () => {
      record.httpStatus = res.writableFinished ? res.statusCode : undefined;
      record.outcome = res.writableFinished ? 'answered' : 'cancelled';
    });
    res.setHeader('x-chaos-server', name);
    const served = capacity.current;
    if (served !== undefined) {
      // A saturated server does not look at cancellation: a queued request is served
      // even after its client gave up (counted as wasted), but is not answered.
      const gone = new AbortController();
      res.once('close', () => gone.abort());
      if ((await served.serve(gone.signal)) === 'refused') {
        const overloaded = { type: 'status', status: 429 } as const;
        writeInjectedError(res, overloaded, paths, url.searchParams.has('batch'));
        return;
      }
      if (gone.signal.aborted) return;
    }
    const current = plan;
    const applies = !current.paths || paths.some((p) => current.paths?.includes(p));
    if (applies) {
      const decision = decideFault(current, attempt, randomFor(sentId, attempt));
      if (decision.delayMs > 0) {
        recorder.fault('delayed');
        const gone = new AbortController();
        const onClose = () => gone.abort();
        req.once('close', onClose);
        await sleep(decision.delayMs, gone.signal);
        req.off('close', onClose);
        if (gone.signal.aborted) return;
      }
      if (decision.action === 'hang') {
        // Never answered: the client's own deadline or `stop()` ends it.
        recorder.fault('hang');
        return;
      }
      if (decision.action === 'error') {
        recorder.fault('error');
        writeInjectedError(
          res,
          decision.error ?? current.error ?? { type: 'status' },
          paths,
          url.searchParams.has('batch'),
        );
        return;
      }
      const cutAfter = current.dropStreamAfter;
      const isStream = (req.headers.accept ?? '').includes('text/event-stream');
      if (cutAfter && isStream && streamsDropped < (current.dropStreamTimes ?? Infinity)) {
        cutStreamAfter(res, cutAfter, () => {
          streamsDropped++;
          recorder.fault('dropped');
        });
      }
    }
    recorder.handled();
    trpc(req, res);
  };

  const cors = options.cors ?? false;
  const server = createServer((req, res) => {
    if (cors && allowCrossOrigin(req, res)) return;
    handle(req, res).catch(() => res.destroy());
  });
  let port = options.port ?? 0;

  const start = () =>
    new Promise<void>((resolve, reject) => {
      if (server.listening) return resolve();
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      // Keep-alive and hung connections would hold `close` open forever.
      server.closeAllConnections();
    });

  await start();
  return {
    name,
    get port() {
      return port;
    },
    get url() {
      return `http://${host}:${port}`;
    },
    get listening() {
      return server.listening;
    },
    setFaults(faults) {
      checkFaultPlan(faults);
      const before = healthStatus();
      plan = faults;
      streamsDropped = 0;
      const after = healthStatus();
      if (after !== before) for (const w of watchers) w.write(`data: ${after}\n\n`);
    },
    stats: () => recorder.snapshot(),
    resetStats: () => {
      recorder.reset();
      capacity.reset();
    },
    setCapacity: capacity.set,
    capacityStats: capacity.stats,
    stop,
    start,
    close: stop,
    [Symbol.asyncDispose]: stop,
  };
}
