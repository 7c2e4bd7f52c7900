/**
 * The three server kinds a chain service can be — grpc-js, nice-grpc (both
 * serving the chaos Echo service's `Unary`), tRPC standalone (a `hop`
 * query) — each recording what arrived at the wire level, apart from the
 * handler and from Breakwater: for gRPC a grpc-js server interceptor placed
 * before every other (the deadline grpc-js read from `grpc-timeout`, the
 * cancellation grpc-js delivers to the handler), for tRPC the node:http
 * request (the deadline header, the response closing before it finished,
 * which is what aborts the procedure's signal).
 */
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { echoClientConstructor } from '@breakwater/chaos';
import { PROPAGATION_HEADERS } from '@breakwater/core';
import {
  type Metadata,
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServerUnaryCall,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { initTRPC, TRPCError } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createServer as createNiceServer, ServerError, type ServerMiddleware } from 'nice-grpc';
import type { Hop, HopRecord } from '../../harness/chain-figures.js';
import type { ServerBindings } from './bindings.js';
import { failureKind, type HopHandler, ROOT_ID_HEADER } from './hop.js';

/** Epoch ms with sub-ms precision, on the clock every process of the run shares. */
export const wallNow = () => performance.timeOrigin + performance.now();

/** The remaining-time header Breakwater's tRPC client sends (integer ms). */
const TRPC_TIMEOUT_HEADER = PROPAGATION_HEADERS.http.timeout;

/** A listening chain server. */
export interface HopServer {
  /** `127.0.0.1:port` (gRPC) or the base URL (tRPC). */
  address: string;
  close(): Promise<void>;
}

const GRPC_STATUS = {
  unavailable: status.UNAVAILABLE,
  deadline: status.DEADLINE_EXCEEDED,
  cancelled: status.CANCELLED,
};
const TRPC_CODE = {
  unavailable: 'SERVICE_UNAVAILABLE',
  deadline: 'TIMEOUT',
  cancelled: 'CLIENT_CLOSED_REQUEST',
} as const;

const firstValue = (metadata: Metadata, key: string) => String(metadata.get(key)[0] ?? '');

/** Records every call the server receives into `records`, before any other interceptor sees it. */
function recordingInterceptor(hop: Hop, records: HopRecord[]): ServerInterceptor {
  return (_method, call) => {
    let record: HopRecord | undefined;
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const deadline = Number(call.getDeadline());
            record = {
              hop,
              rootId: firstValue(metadata, ROOT_ID_HEADER),
              arrivedAt: wallNow(),
              deadline: Number.isFinite(deadline) ? deadline : undefined,
              abortedAt: undefined,
              endedAt: undefined,
            };
            records.push(record);
            pass(metadata);
          },
          onCancel: () => {
            if (record && record.endedAt === undefined) record.abortedAt ??= wallNow();
          },
        }),
      sendStatus: (status, pass) => {
        if (record) record.endedAt ??= wallNow();
        pass(status);
      },
    });
  };
}

async function listenGrpc(server: Server): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
}

const grpcFailure = (error: unknown): Partial<ServiceError> => ({
  code: GRPC_STATUS[failureKind(error)],
  details: error instanceof Error ? error.message : String(error),
});

/** A grpc-js server with `bindings.grpcInterceptor` (Breakwater's server binding) when given. */
export async function startGrpcJsHop(
  hop: Hop,
  handler: HopHandler,
  records: HopRecord[],
  bindings: ServerBindings | undefined,
): Promise<HopServer> {
  const interceptors = [recordingInterceptor(hop, records)];
  if (bindings) interceptors.push(bindings.grpcInterceptor());
  const server = new Server({ interceptors });
  server.addService(echoClientConstructor().service, {
    Unary(call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) {
      const cancelled = new AbortController();
      call.on('cancelled', () => cancelled.abort());
      handler(firstValue(call.metadata, ROOT_ID_HEADER), cancelled.signal).then(
        () => callback(null, { message: 'ok', replica: hop }),
        (error: unknown) => callback(grpcFailure(error)),
      );
    },
  });
  const port = await listenGrpc(server);
  return { address: `127.0.0.1:${port}`, close: async () => server.forceShutdown() };
}

/** A nice-grpc server with `bindings.niceMiddleware` (Breakwater's server binding) when given. */
export async function startNiceGrpcHop(
  hop: Hop,
  handler: HopHandler,
  records: HopRecord[],
  bindings: ServerBindings | undefined,
): Promise<HopServer> {
  // nice-grpc hands its options to grpc-js's Server, interceptors included.
  const base = createNiceServer({ interceptors: [recordingInterceptor(hop, records)] } as never);
  const server = bindings ? base.use(bindings.niceMiddleware() as ServerMiddleware) : base;
  // nice-grpc wants every method of a definition implemented: serve Unary alone.
  const { Unary } = echoClientConstructor().service;
  server.add(
    { Unary } as never,
    {
      async Unary(_request: unknown, context: { metadata: Metadata; signal: AbortSignal }) {
        try {
          await handler(String(context.metadata.get(ROOT_ID_HEADER) ?? ''), context.signal);
        } catch (error) {
          throw new ServerError(GRPC_STATUS[failureKind(error)], String((error as Error).message));
        }
        return { message: 'ok', replica: hop };
      },
    } as never,
  );
  const port = await server.listen('127.0.0.1:0');
  return {
    address: `127.0.0.1:${port}`,
    close: async () => server.forceShutdown(),
  };
}

/** What every tRPC hop's procedures get. */
interface HopContext {
  rootId: string;
}

const t = initTRPC.context<HopContext>().create();

/** The router of a tRPC hop: one `hop` query that runs `handler`. */
function hopRouter(handler: HopHandler, bindings: ServerBindings | undefined) {
  const procedure = bindings ? t.procedure.use(bindings.trpcMiddleware) : t.procedure;
  return t.router({
    hop: procedure.query(async ({ ctx, signal }) => {
      try {
        await handler(ctx.rootId, signal ?? new AbortController().signal);
      } catch (error) {
        throw new TRPCError({
          code: TRPC_CODE[failureKind(error)],
          message: String((error as Error).message),
        });
      }
      return 'ok';
    }),
  });
}

/** The router type Breakwater's and the peers' tRPC clients call. */
export type ChainRouter = ReturnType<typeof hopRouter>;

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** A tRPC standalone server with Breakwater's procedure middleware and context when `bindings` is given. */
export async function startTrpcHop(
  hop: Hop,
  handler: HopHandler,
  records: HopRecord[],
  bindings: ServerBindings | undefined,
): Promise<HopServer> {
  const trpc = createHTTPHandler({
    router: hopRouter(handler, bindings),
    createContext: (opts) => ({
      rootId: header(opts.req.headers[ROOT_ID_HEADER]) ?? '',
      ...(bindings ? bindings.trpcContext(opts) : {}),
    }),
  });
  const server = createHttpServer((req, res) => {
    const arrivedAt = wallNow();
    const timeout = header(req.headers[TRPC_TIMEOUT_HEADER]);
    const record: HopRecord = {
      hop,
      rootId: header(req.headers[ROOT_ID_HEADER]) ?? '',
      arrivedAt,
      deadline: timeout === undefined ? undefined : arrivedAt + Number(timeout),
      abortedAt: undefined,
      endedAt: undefined,
    };
    records.push(record);
    res.once('finish', () => {
      record.endedAt ??= wallNow();
    });
    res.once('close', () => {
      if (!res.writableFinished) record.abortedAt ??= wallNow();
    });
    void trpc(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
