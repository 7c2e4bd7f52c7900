import {
  CALL_ID_HEADER,
  type ChaosTrpcRouter,
  callMetadata,
  createEchoClient,
  ECHO_METHODS,
  type EchoClient,
  type EchoResponse,
} from '@breakwater/chaos';
import { createRouter, type ErrorVerdict, protect } from '@breakwater/core';
import { createGrpcStatusClassifier } from '@breakwater/core/grpc';
import { createRoutingChannel, resilienceInterceptor } from '@breakwater/grpc-js';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { createStatusPreservingFetch, resilienceLink, routingLink } from '@breakwater/trpc';
import { type ServiceError, status } from '@grpc/grpc-js';
import { createTRPCClient, httpLink, type TRPCLink } from '@trpc/client';
import { createChannel, createClientFactory, Metadata } from 'nice-grpc';
import { echoDefinition } from '../../packages/nice-grpc/test/helpers.js';
import type {
  CallOutcome,
  CallRequest,
  ConformanceOptions,
  Driver,
  EntryPoint,
  Harness,
  Targets,
} from './types.js';
import { callerCode } from './verdicts.js';

// The drivers take the scenario's ONE options object (VOCABULARY.md) and hand it to each
// entry point in that entry point's shape; they add only what is framework-specific:
// which methods are idempotent, how a gRPC error is classified where the entry point is
// generic (protect, the router), how a call names itself to the server (x-call-id).

type Untyped = Record<string, unknown>;

/** The per-target part of the options (the router's provider protection), and the rest. */
function splitProtection(options: ConformanceOptions): { protection: Untyped; rest: Untyped } {
  const { retry, attemptTimeoutMs, timeoutMs, circuit, ...rest } = options;
  const protection: Untyped = {};
  if (retry !== undefined) protection.retry = retry;
  if (attemptTimeoutMs !== undefined) protection.attemptTimeoutMs = attemptTimeoutMs;
  if (timeoutMs !== undefined) protection.timeoutMs = timeoutMs;
  if (circuit !== undefined) protection.circuit = circuit;
  return { protection, rest };
}

function timed(start: number, promise: Promise<{ servedBy?: string }>): Promise<CallOutcome> {
  return promise.then(
    (value) => ({
      code: 'OK',
      servedBy: value.servedBy as CallOutcome['servedBy'],
      elapsedMs: performance.now() - start,
    }),
    (error: unknown) => ({ code: callerCode(error), elapsedMs: performance.now() - start, error }),
  );
}

const methodOf = (unsafe: boolean | undefined) => (unsafe ? 'UnaryUnsafe' : 'Unary');

/** A grpc-js Echo call that settles with the response and is cancelled when `signal` aborts. */
function grpcUnary(
  client: EchoClient,
  callId: string,
  plan: CallRequest,
  signal: AbortSignal | undefined,
  timeoutMs?: number,
): Promise<{ servedBy: string }> {
  return new Promise((resolve, reject) => {
    const call = client[methodOf(plan.unsafe)](
      { message: callId },
      callMetadata(callId),
      // performance.timeOrigin + now(): the wall clock without the call the repo rule scans for.
      timeoutMs === undefined
        ? {}
        : { deadline: performance.timeOrigin + performance.now() + timeoutMs },
      (error: ServiceError | null, value?: EchoResponse) => {
        // The caller's signal outlives the call: leave it as found (the refusal rows look).
        signal?.removeEventListener('abort', cancel);
        if (error) reject(error);
        else resolve({ servedBy: (value as EchoResponse).replica });
      },
    );
    const cancel = () => call.cancel();
    if (signal === undefined) return;
    if (signal.aborted) call.cancel();
    else signal.addEventListener('abort', cancel, { once: true });
  });
}

const CANCELLED_ON_CLIENT = 'Cancelled on client';

/**
 * The shared gRPC classifier for the generic entry points (protect, router): grpc-js errors
 * only. A call not safe to repeat is the caller's to mark: like the adapters, it is repeated
 * only when the verdict says the request never left. The driver cannot see a failed call's
 * headers, so it claims none (the worst case): only what the status itself proves keeps a
 * server's text from passing for a request never sent.
 */
function grpcClassify(options: ConformanceOptions, unsafe: () => boolean) {
  const classifier = createGrpcStatusClassifier();
  const perAttemptDeadline = typeof options.attemptTimeoutMs === 'number';
  const judge = (error: unknown): ErrorVerdict => {
    const e = error as Partial<ServiceError>;
    if (typeof e.code !== 'number' || e.metadata === undefined) {
      // An attempt timeout or another error of the entry point itself.
      return { retry: true, failover: true };
    }
    const metadata = e.metadata;
    return classifier({
      path: unsafe() ? ECHO_METHODS.unaryUnsafe : ECHO_METHODS.unary,
      code: e.code,
      details: e.details ?? '',
      trailer: (key) => {
        const v = metadata.get(key)[0];
        return v === undefined ? undefined : String(v);
      },
      perAttemptDeadline,
      // grpc-js's own words for `call.cancel()`, which only the caller's signal triggers here;
      // any other CANCELLED was sent by the server (and may fail over).
      cancelledByCaller: e.code === status.CANCELLED && e.details === CANCELLED_ON_CLIENT,
      ...(unsafe() ? { headersReceived: false } : {}),
    });
  };
  return (error: unknown): ErrorVerdict => {
    const verdict = judge(error);
    if (!unsafe() || verdict.neverSent === true) return verdict;
    return { ...verdict, retry: false, failover: false };
  };
}

const IDEMPOTENT = [ECHO_METHODS.unary];
// Reconnect quickly after a refused connection (grpc-js backs off ≥ 1 s by default).
const FAST_RECONNECT = {
  'grpc.initial_reconnect_backoff_ms': 50,
  'grpc.max_reconnect_backoff_ms': 200,
};

function grpcClients(targets: Targets): Array<{ id: string; client: EchoClient }> {
  const out = [{ id: 'primary', client: createEchoClient(targets.primary, FAST_RECONNECT) }];
  if (targets.secondary !== undefined) {
    out.push({ id: 'secondary', client: createEchoClient(targets.secondary, FAST_RECONNECT) });
  }
  if (targets.tertiary !== undefined) {
    out.push({ id: 'tertiary', client: createEchoClient(targets.tertiary, FAST_RECONNECT) });
  }
  return out;
}

function closeAll(clients: ReadonlyArray<{ client: EchoClient }>): Promise<void> {
  for (const { client } of clients) client.close();
  return Promise.resolve();
}

/** Runs one wrapped operation through protect or the router. */
type Runner = (
  op: (client: EchoClient, signal: AbortSignal) => Promise<{ servedBy: string }>,
  signal: AbortSignal | undefined,
) => Promise<unknown>;

/** protect and the router wrap a plain grpc-js call and judge it with the shared gRPC classifier. */
function wrappedHarness(
  clients: Array<{ id: string; client: EchoClient }>,
  options: ConformanceOptions,
  make: (classify: (error: unknown) => ErrorVerdict, unsafe: () => boolean) => Runner,
): Harness {
  let unsafe = false;
  const isUnsafe = () => unsafe;
  const runner = make(grpcClassify(options, isUnsafe), isUnsafe);
  return {
    call(callId, request) {
      unsafe = request.unsafe === true;
      const op = (client: EchoClient, signal: AbortSignal) =>
        grpcUnary(client, callId, request, signal);
      return timed(performance.now(), runner(op, request.signal) as Promise<{ servedBy?: string }>);
    },
    close: () => closeAll(clients),
  };
}

const protectDriver: Driver = {
  entry: 'protect',
  transport: 'grpc',
  routing: false,
  open(targets, options) {
    const clients = grpcClients({ primary: targets.primary });
    const client = (clients[0] as { client: EchoClient }).client;
    return wrappedHarness(clients, options, (classify) => {
      const run = protect({
        ...options,
        classify,
      });
      return (op, signal) =>
        run(
          ({ signal: attempt }: { signal: AbortSignal }) => op(client, attempt),
          signal === undefined ? undefined : { signal },
        );
    });
  },
};

const routerDriver: Driver = {
  entry: 'router',
  transport: 'grpc',
  routing: true,
  open(targets, options) {
    const clients = grpcClients(targets);
    const { protection, rest } = splitProtection(options);
    return wrappedHarness(clients, options, (classify, unsafe) => {
      const router = createRouter<EchoClient>({
        ...rest,
        providers: clients.map(({ id, client }) => ({ id, resource: client })),
        protection,
        classify,
      });
      return (op, signal) =>
        router.execute((client, ctx) => op(client, ctx.signal), {
          idempotent: !unsafe(),
          ...(signal === undefined ? {} : { signal }),
        });
    });
  },
};

function grpcHarness(client: EchoClient): Harness {
  return {
    call: (callId, plan) => timed(performance.now(), grpcUnary(client, callId, plan, plan.signal)),
    close: () => closeAll([{ client }]),
  };
}

const interceptorDriver: Driver = {
  entry: 'grpc-js interceptor',
  transport: 'grpc',
  routing: false,
  open(targets, options) {
    const interceptor = resilienceInterceptor({
      ...options,
      idempotent: IDEMPOTENT,
    });
    return grpcHarness(
      createEchoClient(targets.primary, { ...FAST_RECONNECT, interceptors: [interceptor] }),
    );
  },
};

/**
 * The routing channel's shape differs from the router's provider protection (p-grpcjs):
 * `protection` holds only `retry`, `attemptTimeoutMs` and `circuit` are top-level, and the
 * call's deadline is grpc-js's own `deadline`.
 */
function routingChannelOptions(options: ConformanceOptions): Untyped {
  const { retry, timeoutMs: _perCall, ...rest } = options;
  return retry === undefined ? rest : { ...rest, protection: { retry } };
}

const routingChannelDriver: Driver = {
  entry: 'grpc-js routing channel',
  transport: 'grpc',
  routing: true,
  open(targets, options) {
    const list = [{ id: 'primary', address: targets.primary, options: FAST_RECONNECT }];
    if (targets.secondary !== undefined) {
      list.push({ id: 'secondary', address: targets.secondary, options: FAST_RECONNECT });
    }
    if (targets.tertiary !== undefined) {
      list.push({ id: 'tertiary', address: targets.tertiary, options: FAST_RECONNECT });
    }
    const channel = createRoutingChannel({
      // The scenarios name a primary, a secondary and a tertiary: registration order, as createRouter's default.
      selection: 'priority',
      ...routingChannelOptions(options),
      targets: list,
      idempotent: IDEMPOTENT,
    });
    // The address is ignored: every call goes through the routing channel.
    const client = createEchoClient('routed', { channelOverride: channel });
    const timeoutMs = options.timeoutMs;
    return {
      call: (callId, request) =>
        timed(
          performance.now(),
          grpcUnary(client, callId, request, request.signal, timeoutMs || undefined),
        ),
      close: async () => {
        client.close();
        channel.close();
      },
    };
  },
};

const niceDriver: Driver = {
  entry: 'nice-grpc middleware',
  transport: 'grpc',
  routing: false,
  open(targets, options) {
    const middleware = resilienceMiddleware({
      ...options,
      idempotent: IDEMPOTENT,
    });
    const channel = createChannel(targets.primary, undefined, FAST_RECONNECT);
    const client = createClientFactory().use(middleware).create(echoDefinition(), channel);
    return {
      call(callId, plan) {
        const method = plan.unsafe ? client.UnaryUnsafe : client.Unary;
        const callOptions = {
          metadata: Metadata({ [CALL_ID_HEADER]: callId }),
          ...(plan.signal === undefined ? {} : { signal: plan.signal }),
        };
        return timed(
          performance.now(),
          method({ message: callId }, callOptions).then((r) => ({ servedBy: r.replica })),
        );
      },
      close: async () => channel.close(),
    };
  },
};

/** The terminating tRPC link: one request per call, `context.callId` sent as `x-call-id`. */
function trpcTerminal(url: string): TRPCLink<ChaosTrpcRouter> {
  return httpLink<ChaosTrpcRouter>({
    url,
    fetch: createStatusPreservingFetch(),
    headers: ({ op }): Record<string, string> => {
      const id = op.context.callId;
      return typeof id === 'string' ? { [CALL_ID_HEADER]: id } : {};
    },
  });
}

function trpcHarness(links: TRPCLink<ChaosTrpcRouter>[]): Harness {
  const client = createTRPCClient<ChaosTrpcRouter>({ links });
  return {
    call(callId, plan) {
      const opts = {
        context: { callId },
        ...(plan.signal === undefined ? {} : { signal: plan.signal }),
      };
      const result = plan.unsafe
        ? client.counter.increment.mutate({ by: 1 }, opts).then(() => ({}))
        : client.echo.query(callId, opts).then((r) => ({ servedBy: r.server }));
      return timed(performance.now(), result);
    },
    close: () => Promise.resolve(),
  };
}

const resilienceLinkDriver: Driver = {
  entry: 'tRPC resilienceLink',
  transport: 'trpc',
  routing: false,
  open(targets, options) {
    const link = resilienceLink({ ...options });
    return trpcHarness([link, trpcTerminal(targets.primary)]);
  },
};

const routingLinkDriver: Driver = {
  entry: 'tRPC routingLink',
  transport: 'trpc',
  routing: true,
  open(targets, options) {
    const { protection, rest } = splitProtection(options);
    const endpoints = [{ id: 'primary', link: trpcTerminal(targets.primary) }];
    if (targets.secondary !== undefined) {
      endpoints.push({ id: 'secondary', link: trpcTerminal(targets.secondary) });
    }
    if (targets.tertiary !== undefined) {
      endpoints.push({ id: 'tertiary', link: trpcTerminal(targets.tertiary) });
    }
    const link = routingLink<ChaosTrpcRouter>({
      // The scenarios name a primary, a secondary and a tertiary: registration order.
      selection: 'priority',
      ...rest,
      endpoints,
      protection,
    });
    return trpcHarness([link]);
  },
};

/** One driver per entry point, in `ENTRY_POINTS` order. */
export const DRIVERS: Readonly<Record<EntryPoint, Driver>> = {
  protect: protectDriver,
  router: routerDriver,
  'grpc-js interceptor': interceptorDriver,
  'grpc-js routing channel': routingChannelDriver,
  'nice-grpc middleware': niceDriver,
  'tRPC resilienceLink': resilienceLinkDriver,
  'tRPC routingLink': routingLinkDriver,
};
