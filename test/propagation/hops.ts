// Servers of the three frameworks, each with its Breakwater server binding, and
// the Breakwater clients that call them: one "hop" of a call chain. Every hop
// records what its handler saw (the inbound deadline, attempt, when its signal
// aborted), so tests assert at the servers.
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRouter, currentInbound, protect, type ResilienceOptions } from '@breakwater/core';
import {
  breakwaterServerInterceptor,
  createRoutingChannel,
  disableGrpcRetries,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import { breakwaterServerMiddleware, resilienceMiddleware } from '@breakwater/nice-grpc';
import { breakwaterHeaders, resilienceLink, routingLink } from '@breakwater/trpc';
import {
  type BreakwaterServerContext,
  breakwaterContext,
  breakwaterProcedure,
} from '@breakwater/trpc/server';
import {
  credentials,
  makeGenericClientConstructor,
  Server,
  ServerCredentials,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { createTRPCClient, httpLink } from '@trpc/client';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import {
  createChannel,
  createClientFactory,
  createServer as createNiceServer,
  ServerError,
  Status,
} from 'nice-grpc';

export type Kind = 'grpc-js' | 'nice-grpc' | 'trpc';

/** What one handler saw of its inbound call. */
export interface Seen {
  arrivedAt: number;
  deadline: number | undefined;
  attempt: number | undefined;
  /** When the handler's inbound signal aborted; `undefined` if it never did. */
  abortedAt: number | undefined;
}

/** A hop's handler: runs inside the binding; a throw becomes UNAVAILABLE / 503. */
export type Handler = (request: Hello) => Promise<Hello>;
export interface Hello {
  message: string;
}

export interface Hop {
  kind: Kind;
  address: string;
  seen: Seen[];
  close(): Promise<void>;
}

export type Call = (request: Hello, options?: { signal?: AbortSignal }) => Promise<Hello>;

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (buffer: Buffer) => JSON.parse(buffer.toString()) as Hello,
};
export const HOP_PATH = '/chain.Hop/Call';
const HOP_SERVICE = {
  call: {
    path: HOP_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
    originalName: 'Call',
  },
} as const;

/** Records the inbound call the running handler serves. */
function record(seen: Seen[]): void {
  const inbound = currentInbound();
  const entry: Seen = {
    arrivedAt: Date.now(),
    deadline: inbound?.deadline,
    attempt: inbound?.attempt,
    abortedAt: undefined,
  };
  inbound?.signal.addEventListener('abort', () => {
    entry.abortedAt = Date.now();
  });
  seen.push(entry);
}

/** How a hop is set up: `bound: false` leaves the binding out; `record: false` records nothing. */
export interface HopOptions {
  bound?: boolean;
  record?: boolean;
}

/** Starts a server of `kind` whose handler is `handler`, on 127.0.0.1:0. */
export async function startHop(
  kind: Kind,
  handler: Handler,
  { bound = true, record: recording = true }: HopOptions = {},
): Promise<Hop> {
  const seen: Seen[] = [];
  const run = (request: Hello) => {
    if (recording) record(seen);
    return handler(request);
  };
  if (kind === 'grpc-js') {
    const server = new Server({ interceptors: bound ? [breakwaterServerInterceptor()] : [] });
    server.addService(HOP_SERVICE, {
      call: (call: { request: Hello }, callback: (e: ServiceError | null, r?: Hello) => void) => {
        run(call.request).then(
          (response) => callback(null, response),
          (error: unknown) =>
            callback({ code: status.UNAVAILABLE, details: String(error) } as ServiceError),
        );
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    return {
      kind,
      address: `127.0.0.1:${port}`,
      seen,
      close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
    };
  }
  if (kind === 'nice-grpc') {
    const server = bound
      ? createNiceServer().use(breakwaterServerMiddleware())
      : createNiceServer();
    server.add(HOP_SERVICE, {
      async call(request: Hello) {
        try {
          return await run(request);
        } catch (error) {
          throw new ServerError(Status.UNAVAILABLE, String(error));
        }
      },
    });
    const port = await server.listen('127.0.0.1:0');
    return { kind, address: `127.0.0.1:${port}`, seen, close: () => server.shutdown() };
  }
  const t = initTRPC.context<BreakwaterServerContext>().create();
  const router = t.router({
    hop: (bound ? t.procedure.use(breakwaterProcedure) : t.procedure)
      .input((value) => value as Hello)
      .query(async ({ input }) => {
        try {
          return await run(input);
        } catch (error) {
          throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: String(error) });
        }
      }),
  });
  const trpc = createHTTPHandler({
    router,
    createContext: (opts) => (bound ? breakwaterContext(opts) : ({} as BreakwaterServerContext)),
  });
  const server = createHttpServer((req, res) => void trpc(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    kind,
    address: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type HopRouter = ReturnType<typeof hopRouterType>;
function hopRouterType() {
  const t = initTRPC.create();
  return t.router({ hop: t.procedure.input((v) => v as Hello).query(({ input }) => input) });
}

export interface Client {
  call: Call;
  close(): void;
}

/**
 * A Breakwater client of `hop` (the standard stack, over `options`), of its own
 * framework or, for a gRPC hop, of the other gRPC one (`via`).
 */
export function clientOf(hop: Hop, options: ResilienceOptions = {}, via: Kind = hop.kind): Client {
  if ((via === 'trpc') !== (hop.kind === 'trpc')) {
    throw new Error(`a ${via} client cannot call a ${hop.kind} server`);
  }
  if (via === 'grpc-js') {
    const Constructor = makeGenericClientConstructor(HOP_SERVICE, 'Hop');
    const client = new Constructor(hop.address, credentials.createInsecure(), {
      ...disableGrpcRetries,
      interceptors: [resilienceInterceptor({ idempotent: [HOP_PATH], ...(options as object) })],
    }) as unknown as {
      call(r: Hello, o: object, cb: (e: Error | null, r: Hello) => void): { cancel(): void };
      close(): void;
    };
    return {
      call: (request, callOptions) =>
        new Promise((resolve, reject) => {
          const call = client.call(request, {}, (e, r) => (e ? reject(e) : resolve(r)));
          callOptions?.signal?.addEventListener('abort', () => call.cancel());
        }),
      close: () => client.close(),
    };
  }
  if (via === 'nice-grpc') {
    const channel = createChannel(hop.address);
    const client = createClientFactory()
      .use(resilienceMiddleware({ idempotent: [HOP_PATH], ...(options as object) }))
      .create(HOP_SERVICE, channel) as unknown as {
      call(r: Hello, o?: { signal?: AbortSignal }): Promise<Hello>;
    };
    return { call: (request, o) => client.call(request, o), close: () => channel.close() };
  }
  const client = createTRPCClient<HopRouter>({
    links: [resilienceLink(options), httpLink({ url: hop.address, headers: breakwaterHeaders })],
  });
  return {
    call: (request, o) => client.hop.query(request, o?.signal ? { signal: o.signal } : {}),
    close: () => {},
  };
}

/** The entry points that are not an adapter's resilience stack. */
export type EntryPoint = 'protect' | 'createRouter' | 'createRoutingChannel' | 'routingLink';

/** The kind of server each entry point calls. */
export const ENTRY_KIND: Readonly<Record<EntryPoint, Kind>> = {
  protect: 'grpc-js',
  createRouter: 'grpc-js',
  createRoutingChannel: 'grpc-js',
  routingLink: 'trpc',
};

type GrpcHopClient = {
  call(r: Hello, o: object, cb: (e: Error | null, r: Hello) => void): { cancel(): void };
  close(): void;
};

/** A grpc-js client of `hop` with no Breakwater interceptor (`channel` instead of a channel of its own). */
function plainGrpcClient(address: string, channel?: ReturnType<typeof createRoutingChannel>) {
  const Constructor = makeGenericClientConstructor(HOP_SERVICE, 'Hop');
  return new Constructor(address, credentials.createInsecure(), {
    ...disableGrpcRetries,
    ...(channel === undefined ? {} : { channelOverride: channel }),
  }) as unknown as GrpcHopClient;
}

/** One call of a plain grpc-js client, cancelled when `signal` aborts. */
function grpcCall(client: GrpcHopClient, request: Hello, signal?: AbortSignal): Promise<Hello> {
  return new Promise((resolve, reject) => {
    const call = client.call(request, {}, (e, r) => (e ? reject(e) : resolve(r)));
    signal?.addEventListener('abort', () => call.cancel());
  });
}

/**
 * A client of `hop` through `entry`: `protect` and `createRouter` around a
 * plain grpc-js client (they see only the attempt's signal), a plain grpc-js
 * client over `createRoutingChannel`, a tRPC client with `routingLink`.
 * `options` are the entry point's own (`retry` as `protection.retry` for the routers).
 */
export function entryClientOf(
  entry: EntryPoint,
  hop: Hop,
  options: { retry?: ResilienceOptions['retry']; propagate?: ResilienceOptions['propagate'] } = {},
): Client {
  const { retry, propagate } = options;
  const shared = propagate === undefined ? {} : { propagate };
  const protection = retry === undefined ? {} : { protection: { retry } };
  if (entry === 'protect') {
    const client = plainGrpcClient(hop.address);
    const run = protect({
      timeoutMs: 10_000,
      ...(retry === undefined ? {} : { retry }),
      ...shared,
    });
    return {
      call: (request, o) =>
        run(
          ({ signal }) => grpcCall(client, request, signal),
          o?.signal ? { signal: o.signal } : {},
        ),
      close: () => client.close(),
    };
  }
  if (entry === 'createRouter') {
    const client = plainGrpcClient(hop.address);
    const router = createRouter({
      providers: [{ id: 'leaf', resource: client }],
      ...protection,
      ...shared,
    });
    return {
      call: (request, o) =>
        router.execute(
          (c, { signal }) => grpcCall(c, request, signal),
          o?.signal ? { signal: o.signal } : {},
        ),
      close: () => client.close(),
    };
  }
  if (entry === 'createRoutingChannel') {
    const channel = createRoutingChannel({
      targets: [{ id: 'leaf', address: hop.address }],
      idempotent: [HOP_PATH],
      ...protection,
      ...shared,
    });
    const client = plainGrpcClient(hop.address, channel);
    return {
      call: (request, o) => grpcCall(client, request, o?.signal),
      close: () => client.close(),
    };
  }
  const client = createTRPCClient<HopRouter>({
    links: [
      routingLink<HopRouter>({
        endpoints: [
          { id: 'leaf', link: httpLink({ url: hop.address, headers: breakwaterHeaders }) },
        ],
        ...protection,
        ...shared,
      }),
    ],
  });
  return {
    call: (request, o) => client.hop.query(request, o?.signal ? { signal: o.signal } : {}),
    close: () => {},
  };
}

/** Waits `ms`, or until `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A leaf handler that waits for its inbound call's cancellation (5 s at most). */
export const hangUntilCancelled: Handler = async (request) => {
  await sleep(5_000, currentInbound()?.signal);
  return request;
};

/**
 * Cancels `times` root calls once `far` (a hop hanging until cancelled) has
 * each; returns the ms from each cancel until `far`'s handler signal aborted,
 * sorted.
 */
export async function cancellationLags(root: Client, far: Hop, times: number): Promise<number[]> {
  const lags: number[] = [];
  for (let i = 0; i < times; i++) {
    const controller = new AbortController();
    const call = root.call({ message: 'hi' }, { signal: controller.signal }).then(
      () => 'answered',
      () => 'cancelled',
    );
    while (far.seen.length === i) await sleep(2);
    const cancelledAt = Date.now();
    controller.abort();
    if ((await call) !== 'cancelled') throw new Error('the root call was not cancelled');
    while (far.seen[i]?.abortedAt === undefined && Date.now() - cancelledAt < 1_000) await sleep(1);
    lags.push((far.seen[i]?.abortedAt ?? Number.POSITIVE_INFINITY) - cancelledAt);
  }
  return lags.sort((a, b) => a - b);
}

/** Opens servers and clients that a test's `closeAll` closes. */
type Opener = ReturnType<typeof opener>;

/**
 * Cancels five root calls through a bound `kind` mid tier whose handler calls
 * a hanging leaf with the client `toLeaf` makes; returns the lags (sorted) from
 * each cancel until the leaf's handler signal aborted.
 */
export async function cancelThroughMid(
  open: Opener,
  kind: Kind,
  toLeaf: (leaf: Hop) => Client,
): Promise<number[]> {
  const leaf = await open.hop(kind, hangUntilCancelled);
  const down = toLeaf(leaf);
  const mid = await open.hop(kind, (r) => down.call(r));
  return cancellationLags(open.client(mid), leaf, 5);
}

/**
 * A bound `kind` mid tier calls a 30 ms leaf in a loop (with the client
 * `toLeaf` makes, given a 20 ms margin) until a call fails, under a root call
 * of 200 ms; returns when the root call started and what the leaf saw, 150 ms
 * after the root call failed.
 */
export async function loopPastRootDeadline(
  open: Opener,
  kind: Kind,
  toLeaf: (leaf: Hop) => Client,
): Promise<{ started: number; seen: Seen[] }> {
  const leaf = await open.hop(kind, async (r) => {
    await sleep(30);
    return r;
  });
  const down = toLeaf(leaf);
  const mid = await open.hop(kind, async (r) => {
    for (;;) await down.call(r);
  });
  const root = open.client(mid, { timeoutMs: 200, retry: false });
  const started = Date.now();
  const failed = await root.call({ message: 'hi' }).then(
    () => false,
    () => true,
  );
  if (!failed) throw new Error('the root call answered');
  await sleep(150);
  return { started, seen: leaf.seen };
}

/** `startHop` and `clientOf` whose servers and clients `closeAll` closes (last opened first). */
export function opener() {
  const opened: Array<Hop | Client> = [];
  return {
    async hop(kind: Kind, handler: Handler, options?: HopOptions): Promise<Hop> {
      const h = await startHop(kind, handler, options);
      opened.push(h);
      return h;
    },
    client(h: Hop, options?: ResilienceOptions, via?: Kind): Client {
      const c = clientOf(h, options, via);
      opened.push(c);
      return c;
    },
    entryClient(entry: EntryPoint, h: Hop, options?: Parameters<typeof entryClientOf>[2]): Client {
      const c = entryClientOf(entry, h, options);
      opened.push(c);
      return c;
    },
    async closeAll(): Promise<void> {
      for (const o of opened.splice(0).reverse()) await o.close();
    },
  };
}
