/**
 * Every client the adapter and fault benchmarks drive, Breakwater and peers,
 * each as a chaos `ScenarioClient` (one call, sends `x-call-id`, rejects on
 * failure). Peer settings are documented in BENCHMARKS.md ("How the peers are
 * configured"); keep the two in step.
 */
import {
  type ChaosTrpcRouter,
  callMetadata,
  createEchoClient,
  type EchoClient,
  type EchoResponse,
  echoClientConstructor,
  loadEchoPackageDefinition,
  type ScenarioClient,
} from '@breakwater/chaos';
import { createRetryBudget, createRouter } from '@breakwater/core';
import type { RouteHedge } from '@breakwater/core/types';
import {
  createRoutingChannel,
  disableGrpcRetries,
  idempotentMethods,
  type ResilienceInterceptorOptions,
  resilienceInterceptor,
} from '@breakwater/grpc-js';
import { type ResilienceMiddlewareOptions, resilienceMiddleware } from '@breakwater/nice-grpc';
import {
  createStatusPreservingFetch,
  type ResilienceLinkOptions,
  resilienceLink,
  routingLink,
} from '@breakwater/trpc';
import type { ChannelOptions, ServiceError } from '@grpc/grpc-js';
import { createTRPCClient, httpBatchLink, retryLink, type TRPCLink } from '@trpc/client';
import type { AnyRouter } from '@trpc/server';
import {
  ConsecutiveBreaker,
  circuitBreaker,
  retry as cockatielRetry,
  ExponentialBackoff,
  handleWhen,
  isBrokenCircuitError,
  wrap,
} from 'cockatiel';
import {
  type Channel,
  ClientError,
  createChannel,
  createClientFactory,
  Metadata,
  type ServiceDefinition as NiceDefinition,
  Status,
} from 'nice-grpc';
import { deadlineMiddleware as niceDeadlineMiddleware } from 'nice-grpc-client-middleware-deadline';
import { retryMiddleware as niceRetryMiddleware } from 'nice-grpc-client-middleware-retry';

/** A client lane that can be closed. */
export interface Lane extends ScenarioClient {
  close(): void;
}

const ECHO = 'breakwater.chaos.v1.Echo';
/** Attempts (first call included) every retrying client gets, so the comparison is like for like. */
export const ATTEMPTS = 3;
/** First backoff delay, ms, exponential ×2 for every peer that has backoff. */
export const BASE_DELAY_MS = 50;

const describeGrpc = (e: unknown) => {
  const code = (e as { code?: unknown })?.code;
  // Breakwater's refusals are UNAVAILABLE with the core error as `cause`: name it, so a
  // refused call is told apart from one the server failed.
  const cause = (e as { cause?: { name?: unknown } })?.cause?.name;
  const name =
    typeof code === 'number' ? (Status[code] ?? String(code)) : String((e as Error)?.name);
  return typeof cause === 'string' && cause.endsWith('Error') ? `${name} (${cause})` : name;
};

// ---------------------------------------------------------------- grpc-js

/** grpc-js retry policy (gRFC A6) for the Echo service. */
export const grpcRetryPolicy = {
  maxAttempts: ATTEMPTS,
  initialBackoff: `${BASE_DELAY_MS / 1000}s`,
  maxBackoff: '1s',
  backoffMultiplier: 2,
  retryableStatusCodes: ['UNAVAILABLE'],
};

/** grpc-js channel options for a service config with the given parts. */
export function grpcServiceConfig(parts: {
  retry?: boolean;
  throttle?: boolean;
  roundRobin?: boolean;
  hedgeDelayMs?: number;
  /** Attempts of a hedged call in all. Defaults to 2. */
  hedgeAttempts?: number;
}): ChannelOptions {
  const methodConfig: Record<string, unknown> = { name: [{ service: ECHO }] };
  if (parts.retry) methodConfig.retryPolicy = grpcRetryPolicy;
  if (parts.hedgeDelayMs !== undefined) {
    methodConfig.hedgingPolicy = {
      maxAttempts: parts.hedgeAttempts ?? 2,
      hedgingDelay: `${parts.hedgeDelayMs / 1000}s`,
      nonFatalStatusCodes: ['UNAVAILABLE'],
    };
  }
  const config: Record<string, unknown> = { methodConfig: [methodConfig] };
  if (parts.throttle) config.retryThrottling = { maxTokens: 10, tokenRatio: 0.1 };
  if (parts.roundRobin) config.loadBalancingConfig = [{ round_robin: {} }];
  return { 'grpc.service_config': JSON.stringify(config) };
}

/** One grpc-js target string for several replicas (`ipv4:` scheme, comma-separated). */
export function multiTarget(addresses: readonly string[]): string {
  return addresses.length === 1 ? (addresses[0] as string) : `ipv4:${addresses.join(',')}`;
}

function unaryCall(client: EchoClient, callId: string, deadlineMs?: number): Promise<EchoResponse> {
  return new Promise((resolve, reject) => {
    const options = deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs };
    client.Unary(
      { message: 'x' },
      callMetadata(callId),
      options,
      (error: ServiceError | null, value?: EchoResponse) =>
        error ? reject(error) : resolve(value as EchoResponse),
    );
  });
}

/** A grpc-js Echo client lane (`deadlineMs`: a deadline on every call; defaults to none). */
export function grpcLane(
  name: string,
  target: string,
  options: ChannelOptions = {},
  deadlineMs?: number,
): Lane {
  const client = createEchoClient(target, options);
  return {
    name,
    call: async ({ callId }) => ({
      replica: (await unaryCall(client, callId, deadlineMs)).replica,
    }),
    describeError: describeGrpc,
    close: () => client.close(),
  };
}

/** Breakwater's grpc-js stack as the fault benchmarks configure it (`budget: false` drops the retry budget). */
export function breakwaterGrpcOptions(
  extra: Partial<ResilienceInterceptorOptions> = {},
  budget = true,
): ResilienceInterceptorOptions {
  return {
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    timeoutMs: 10_000,
    attemptTimeoutMs: false,
    concurrency: false,
    circuit: { failureThreshold: 5, openDurationMs: 1000 },
    retry: {
      attempts: ATTEMPTS,
      backoff: { baseDelayMs: BASE_DELAY_MS, strategy: 'exponential', jitter: 'full' },
    },
    budget: budget ? createRetryBudget({}) : false,
    ...extra,
  };
}

/** grpc-js client with `resilienceInterceptor` (grpc-js's own retries disabled, as the adapter asks). */
export function breakwaterGrpcLane(
  name: string,
  target: string,
  options: ResilienceInterceptorOptions = breakwaterGrpcOptions(),
  channel: ChannelOptions = {},
): Lane {
  return grpcLane(name, target, {
    ...channel,
    ...disableGrpcRetries,
    interceptors: [resilienceInterceptor(options)],
  });
}

/** cockatiel `wrap(retry, circuitBreaker)` around a plain grpc-js client (its README's pattern). */
export function cockatielGrpcLane(name: string, target: string): Lane {
  const client = createEchoClient(target, disableGrpcRetries);
  const retryable = handleWhen((e) => (e as ServiceError).code === Status.UNAVAILABLE);
  const policy = wrap(
    cockatielRetry(retryable, {
      maxAttempts: ATTEMPTS - 1,
      backoff: new ExponentialBackoff({ initialDelay: BASE_DELAY_MS, maxDelay: 1000 }),
    }),
    circuitBreaker(retryable, { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(5) }),
  );
  return {
    name,
    call: async ({ callId }) => ({
      replica: (await policy.execute(() => unaryCall(client, callId))).replica,
    }),
    describeError: (e) => (isBrokenCircuitError(e) ? 'circuit open' : describeGrpc(e)),
    close: () => client.close(),
  };
}

/**
 * Breakwater's router over one grpc-js client per replica (no grpc-js retries):
 * failover across replicas, a circuit per replica, optional hedging.
 */
export function breakwaterRouterLane(
  name: string,
  addresses: readonly string[],
  hedge?: RouteHedge,
): Lane {
  const clients = addresses.map((a) => createEchoClient(a, disableGrpcRetries));
  const router = createRouter({
    providers: clients.map((resource, i) => ({ id: `r${i}`, resource })),
    selection: 'round-robin',
    protection: {
      attemptTimeoutMs: 10_000,
      circuit: { failureThreshold: 3, openDurationMs: 1000 },
    },
    ...(hedge ? { hedge } : {}),
  });
  return {
    name,
    call: async ({ callId }) => {
      const reply = await router.execute((client, { signal }) => {
        return new Promise<EchoResponse>((resolve, reject) => {
          const call = client.Unary(
            { message: 'x' },
            callMetadata(callId),
            { deadline: Date.now() + 10_000 },
            (error: ServiceError | null, value?: EchoResponse) =>
              error ? reject(error) : resolve(value as EchoResponse),
          );
          signal.addEventListener('abort', () => call.cancel(), { once: true });
        });
      });
      return { replica: reply.replica };
    },
    describeError: (e) => String((e as Error)?.name ?? 'error'),
    close: () => {
      for (const c of clients) c.close();
    },
  };
}

/**
 * A plain grpc-js client over `createRoutingChannel` (the grpc-js adapter's
 * router as a Channel): round-robin over one channel per replica, one attempt
 * per target then fail-over, a circuit per target (3 failures, 1 s reset),
 * optional hedging; a 10 s deadline on every call, like the router lane.
 */
export function routingChannelLane(
  name: string,
  addresses: readonly string[],
  hedge?: RouteHedge,
): Lane {
  const channel = createRoutingChannel({
    targets: addresses.map((address, i) => ({ id: `r${i}`, address })),
    selection: 'round-robin',
    idempotent: idempotentMethods(loadEchoPackageDefinition()),
    circuit: { failureThreshold: 3, openDurationMs: 1_000 },
    ...(hedge ? { hedge } : {}),
  });
  return {
    ...grpcLane(name, 'routed', { channelOverride: channel }, 10_000),
    close: () => channel.close(),
  };
}

// ---------------------------------------------------------------- nice-grpc

/** The Echo service definition nice-grpc accepts (grpc-js style, from proto-loader). */
export function niceDefinition(): NiceDefinition {
  return echoClientConstructor().service as unknown as NiceDefinition;
}

/** The Echo client nice-grpc's factory creates. */
export interface NiceEcho {
  Unary(request: { message: string }, options?: Record<string, unknown>): Promise<EchoResponse>;
}

function niceCall(
  client: NiceEcho,
  callId: string,
  options: Record<string, unknown>,
  headers: Record<string, string>,
) {
  return client.Unary(
    { message: 'x' },
    { ...options, metadata: Metadata({ ...headers, 'x-call-id': callId }) },
  );
}

/** A lane over a nice-grpc Echo client: `options` and `headers` go with every call. */
export function niceLane(
  name: string,
  channel: Channel,
  client: NiceEcho,
  options: Record<string, unknown>,
  headers: Record<string, string> = {},
): Lane {
  return {
    name,
    call: async ({ callId }) => ({
      replica: (await niceCall(client, callId, options, headers)).replica,
    }),
    describeError: (e) => (e instanceof ClientError ? describeGrpc(e) : String((e as Error)?.name)),
    close: () => channel.close(),
  };
}

/** The `grpc-timeout` header of a `deadlineMs` deadline, none when undefined. */
const deadlineHeader = (deadlineMs: number | undefined): Record<string, string> =>
  deadlineMs === undefined ? {} : { 'grpc-timeout': `${Math.ceil(deadlineMs)}m` };

/**
 * nice-grpc client with no middleware. `deadlineMs`: send `grpc-timeout` with
 * that many ms on every call (defaults to none) — written as a header because
 * nice-grpc sends none of its own (not even through its deadline middleware);
 * the server arms its deadline timer as for any deadline, but this client does
 * not enforce it.
 */
export function niceBareLane(name: string, target: string, deadlineMs?: number): Lane {
  const channel = createChannel(target, undefined, disableGrpcRetries);
  const client = createClientFactory().create(niceDefinition(), channel) as unknown as NiceEcho;
  return niceLane(name, channel, client, {}, deadlineHeader(deadlineMs));
}

/**
 * nice-grpc with the official `nice-grpc-client-middleware-deadline`, given
 * `deadlineMs` on every call, and the header of `niceBareLane` with
 * `deadlineMs`: the middleware enforces the deadline on the client (a timer
 * that aborts the call) but sends nothing, so the header sends it. Sends and
 * enforces, like the stack and grpc-js's `deadline` call option.
 */
export function niceDeadlineEnforcedLane(name: string, target: string, deadlineMs: number): Lane {
  const channel = createChannel(target, undefined, disableGrpcRetries);
  const client = createClientFactory()
    .use(niceDeadlineMiddleware)
    .create(niceDefinition(), channel) as unknown as NiceEcho;
  return niceLane(name, channel, client, { deadline: deadlineMs }, deadlineHeader(deadlineMs));
}

/**
 * nice-grpc with one middleware that only passes each call on (and the
 * header of `niceBareLane` with `deadlineMs`): what nice-grpc's middleware
 * hook costs a call before any middleware does any work.
 */
export function nicePassThroughLane(name: string, target: string, deadlineMs?: number): Lane {
  const channel = createChannel(target, undefined, disableGrpcRetries);
  const client = createClientFactory()
    .use(async function* passThrough(call, options) {
      return yield* call.next(call.request, options);
    })
    .create(niceDefinition(), channel) as unknown as NiceEcho;
  return niceLane(name, channel, client, {}, deadlineHeader(deadlineMs));
}

/** nice-grpc with `nice-grpc-client-middleware-retry` (retries on, `retryMaxAttempts` = retries after the first). */
export function niceRetryLane(name: string, target: string): Lane {
  const channel = createChannel(target, undefined, disableGrpcRetries);
  const client = createClientFactory()
    .use(niceRetryMiddleware)
    .create(niceDefinition(), channel) as unknown as NiceEcho;
  return niceLane(name, channel, client, {
    retry: true,
    retryMaxAttempts: ATTEMPTS - 1,
    retryBaseDelayMs: BASE_DELAY_MS,
    retryMaxDelayMs: 1000,
    retryableStatuses: [Status.UNAVAILABLE],
  });
}

/** Breakwater's nice-grpc stack. */
export function breakwaterNiceOptions(): ResilienceMiddlewareOptions {
  return {
    idempotent: [`/${ECHO}/Unary`],
    timeoutMs: 10_000,
    attemptTimeoutMs: false,
    circuit: { failureThreshold: 5, openDurationMs: 1000 },
    concurrency: false,
    retry: {
      attempts: ATTEMPTS,
      backoff: { baseDelayMs: BASE_DELAY_MS, strategy: 'exponential', jitter: 'full' },
    },
    budget: createRetryBudget({}),
  };
}

/** nice-grpc with `resilienceMiddleware`. */
export function breakwaterNiceLane(
  name: string,
  target: string,
  options = breakwaterNiceOptions(),
): Lane {
  const channel = createChannel(target, undefined, disableGrpcRetries);
  const client = createClientFactory()
    .use(resilienceMiddleware(options))
    .create(niceDefinition(), channel) as unknown as NiceEcho;
  return niceLane(name, channel, client, {});
}

// ---------------------------------------------------------------- tRPC

type Links = TRPCLink<ChaosTrpcRouter>[];

/**
 * The terminating link: `httpBatchLink` sending `context.callId` as `x-call-id`.
 * `maxItems` 1 in the fault runs so one HTTP request is one call (the server counts attempts per request).
 */
export function trpcTerminal(url: string, maxItems?: number) {
  return httpBatchLink<ChaosTrpcRouter>({
    url,
    ...(maxItems === undefined ? {} : { maxItems }),
    fetch: createStatusPreservingFetch(),
    headers: ({ opList }): Record<string, string> => {
      const id = opList[0].context.callId;
      return typeof id === 'string' ? { 'x-call-id': id } : {};
    },
  });
}

/**
 * A tRPC client lane over `links`; with `timeoutMs`, each call passes
 * `signal: AbortSignal.timeout(timeoutMs)` (tRPC's own way to bound a call).
 */
export function trpcLane(name: string, links: Links, timeoutMs?: number): Lane {
  const client = createTRPCClient<ChaosTrpcRouter>({ links });
  return {
    name,
    call: async ({ callId }) => {
      const reply = (await client.echo.query(
        'x',
        timeoutMs === undefined
          ? { context: { callId } }
          : { context: { callId }, signal: AbortSignal.timeout(timeoutMs) },
      )) as { server?: string };
      return { replica: reply.server };
    },
    describeError: (e) => {
      const status = (e as { data?: { httpStatus?: number } })?.data?.httpStatus;
      if (status) return `HTTP ${status}`;
      // Breakwater's refusals and tRPC's own fetch failures show up as the cause.
      const cause = (e as { cause?: { name?: string; code?: string } })?.cause;
      return String(cause?.code ?? cause?.name ?? (e as Error)?.name);
    },
    close: () => {},
  };
}

/** tRPC's own `retryLink`, configured like its docs (queries only, server errors only) with our attempts and backoff. */
export function peerRetryLink<Router extends AnyRouter>(): TRPCLink<Router> {
  return retryLink<Router>({
    retry: ({ op, error, attempts }) => {
      if (op.type !== 'query') return false;
      const status = error.data?.httpStatus;
      if (status !== undefined && status < 500) return false;
      return attempts < ATTEMPTS;
    },
    retryDelayMs: (attempt) => Math.min(1000, BASE_DELAY_MS * 2 ** attempt),
  });
}

/** {@link peerRetryLink} before `terminal`. */
export function trpcRetryLinks(terminal: TRPCLink<ChaosTrpcRouter>): Links {
  return [peerRetryLink<ChaosTrpcRouter>(), terminal];
}

/** Breakwater's `resilienceLink` stack (`budget: false` drops the retry budget, for a like-for-like reference). */
export function breakwaterTrpcLinks(
  terminal: TRPCLink<ChaosTrpcRouter>,
  extra: Partial<ResilienceLinkOptions> = {},
  budget = true,
): Links {
  return [
    resilienceLink<ChaosTrpcRouter>({
      // The parts this lane leaves out are off, so the comparison is like for like.
      attemptTimeoutMs: false,
      concurrency: false,
      ...extra,
      timeoutMs: 10_000,
      retry: {
        attempts: ATTEMPTS,
        backoff: { baseDelayMs: BASE_DELAY_MS, strategy: 'exponential', jitter: 'full' },
      },
      budget: budget ? createRetryBudget({}) : false,
      circuit: { failureThreshold: 5, openDurationMs: 1000 },
    }),
    terminal,
  ];
}

/**
 * Breakwater's `routingLink` over one terminating link per tRPC server
 * (`maxItems` 1, so one request is one call): round-robin, failover to the
 * next server, one attempt per server, a circuit per server (3 failures, 1 s
 * before a recovery call), optional hedging, like the gRPC router lane.
 */
export function breakwaterTrpcRoutingLinks(urls: readonly string[], hedge?: RouteHedge): Links {
  return [
    routingLink<ChaosTrpcRouter>({
      endpoints: urls.map((url, i) => ({ id: `t${i}`, link: trpcTerminal(url, 1) })),
      selection: 'round-robin',
      protection: {
        retry: false,
        timeoutMs: 10_000,
        circuit: { failureThreshold: 3, openDurationMs: 1000 },
      },
      ...(hedge ? { hedge } : {}),
    }),
  ];
}
