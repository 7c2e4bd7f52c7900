/**
 * The clients of the recovery and soak suites (issue 19): Breakwater's
 * `protect`, grpc-js, nice-grpc and tRPC stacks, each with the settings its
 * README shows ("recommended") and with none ("defaults"), plus the peers.
 * Every Breakwater lane says which breakers guard it, so a suite can count
 * their state changes. Keep the settings in step with the READMEs and with
 * the notes of the suites.
 */
import {
  callMetadata,
  createEchoClient,
  type EchoClient,
  type EchoResponse,
  echoClientConstructor,
  loadEchoPackageDefinition,
} from '@breakwater/chaos';
import {
  type CircuitBreaker,
  createCircuitBreaker,
  type ProtectOptions,
  protect,
  type ResilienceOptions,
  STANDARD_RESILIENCE,
} from '@breakwater/core';
import { disableGrpcRetries, idempotentMethods, resilienceInterceptor } from '@breakwater/grpc-js';
import { type ResilienceMiddlewareOptions, resilienceMiddleware } from '@breakwater/nice-grpc';
import { type ResilienceLinkOptions, resilienceLink } from '@breakwater/trpc';
import type { ServiceError } from '@grpc/grpc-js';
import {
  createChannel,
  createClientFactory,
  Metadata,
  type ServiceDefinition as NiceDefinition,
  Status,
} from 'nice-grpc';
import {
  cockatielGrpcLane,
  grpcLane,
  grpcServiceConfig,
  type Lane,
  niceRetryLane,
  trpcLane,
  trpcRetryLinks,
  trpcTerminal,
} from '../clients.js';

const UNARY = '/breakwater.chaos.v1.Echo/Unary';

/** A lane and the breakers that guard it (none for the peers: their breakers are not ours to count). */
export interface StackLane extends Lane {
  /** Breakwater's breakers of this lane, to count state changes on. */
  readonly breakers: readonly CircuitBreaker[];
}

/** Which settings a Breakwater lane runs with. */
export type Settings = 'recommended' | 'defaults';

/** Options every Breakwater lane of a run gets on top of its settings (the soak's 1 s call deadline). */
export type Overrides = Pick<ResilienceOptions, 'timeoutMs'>;

const describe = (e: unknown): string => {
  const code = (e as { code?: unknown })?.code;
  const cause = (e as { cause?: { name?: unknown; code?: unknown } })?.cause;
  const causeName = typeof cause?.name === 'string' ? cause.name : undefined;
  const status = (e as { data?: { httpStatus?: number } })?.data?.httpStatus;
  const base =
    typeof code === 'number'
      ? (Status[code] ?? String(code))
      : status !== undefined
        ? `HTTP ${status}`
        : String((e as Error)?.name ?? 'error');
  return causeName?.endsWith('Error') ? `${base} (${causeName})` : base;
};

/** True when `description` (from a lane's `describeError`) is a refusal by an open circuit. */
export function isRefusal(description: string | undefined): boolean {
  return description !== undefined && /CircuitOpen|BrokenCircuit|circuit open/i.test(description);
}

function unary(client: EchoClient, callId: string, signal?: AbortSignal): Promise<EchoResponse> {
  return new Promise((resolve, reject) => {
    const call = client.Unary(
      { message: 'x' },
      callMetadata(callId),
      {},
      (error: ServiceError | null, value?: EchoResponse) =>
        error ? reject(error) : resolve(value as EchoResponse),
    );
    signal?.addEventListener('abort', () => call.cancel(), { once: true });
  });
}

/**
 * `protect` around a plain grpc-js client. Recommended: the standard stack
 * the adapters run (`protect(STANDARD_RESILIENCE)`); defaults: retries, a
 * budget and a circuit, each with its own defaults (`{ retry: {}, budget: {},
 * circuit: {} }`: `protect()` alone turns every part off). The breaker's
 * defaults are the standard circuit (`DEFAULT_CIRCUIT_BREAKER_OPTIONS`, which
 * `STANDARD_RESILIENCE.circuit` is), so this lane differs from "recommended"
 * only in having no deadlines and no bulkhead.
 */
export function protectLane(
  name: string,
  address: string,
  settings: Settings,
  overrides: Overrides = {},
): StackLane {
  const client = createEchoClient(address, disableGrpcRetries);
  const options: ProtectOptions =
    settings === 'recommended'
      ? { ...STANDARD_RESILIENCE, ...overrides }
      : { retry: {}, budget: {}, circuit: {}, ...overrides };
  const run = protect(options);
  return {
    name,
    call: async ({ callId }) => ({
      replica: (await run(({ signal }) => unary(client, callId, signal))).replica,
    }),
    describeError: describe,
    close: () => client.close(),
    breakers: run.circuit ? [run.circuit] : [],
  };
}

/**
 * grpc-js with `resilienceInterceptor`. Recommended: its README's snippet
 * (`{ idempotent: idempotentMethods(packageDefinition) }`, the standard stack);
 * defaults: `resilienceInterceptor()` (standard stack, no method idempotent).
 */
export function grpcStackLane(
  name: string,
  address: string,
  settings: Settings,
  overrides: Overrides = {},
): StackLane {
  const interceptor = resilienceInterceptor(
    settings === 'recommended'
      ? { idempotent: idempotentMethods(loadEchoPackageDefinition()), ...overrides }
      : overrides,
  );
  const breaker = interceptor.circuitFor(UNARY);
  return {
    ...grpcLane(name, address, { ...disableGrpcRetries, interceptors: [interceptor] }),
    describeError: describe,
    breakers: breaker ? [breaker] : [],
  };
}

/** nice-grpc's README options (its package README's example). */
function niceRecommended(): ResilienceMiddlewareOptions {
  return {
    idempotent: [UNARY],
    timeoutMs: 2_000,
    retry: { backoff: { baseDelayMs: 10 } },
  };
}

/**
 * nice-grpc with `resilienceMiddleware`. Recommended: its README's example;
 * defaults: `resilienceMiddleware()`. The middleware does not show its
 * breakers, so the lane passes one built from the standard circuit options
 * (one method: the same as the per-method circuit it would build).
 */
export function niceStackLane(
  name: string,
  address: string,
  settings: Settings,
  overrides: Overrides = {},
): StackLane {
  const options: ResilienceMiddlewareOptions = settings === 'recommended' ? niceRecommended() : {};
  const breaker = createCircuitBreaker({ ...STANDARD_RESILIENCE.circuit, name });
  const channel = createChannel(address, undefined, disableGrpcRetries);
  const client = createClientFactory()
    .use(resilienceMiddleware({ ...options, ...overrides, circuit: breaker }))
    .create(echoClientConstructor().service as unknown as NiceDefinition, channel) as unknown as {
    Unary(request: { message: string }, options?: object): Promise<EchoResponse>;
  };
  return {
    name,
    call: async ({ callId }) => ({
      replica: (
        await client.Unary({ message: 'x' }, { metadata: Metadata({ 'x-call-id': callId }) })
      ).replica,
    }),
    describeError: describe,
    close: () => channel.close(),
    breakers: [breaker],
  };
}

/** tRPC's README options (its package README's example). */
function trpcRecommended(): ResilienceLinkOptions {
  return {
    retry: { attempts: 3, backoff: { baseDelayMs: 10, strategy: 'exponential' } },
    attemptTimeoutMs: 2_000,
  };
}

/**
 * tRPC with `resilienceLink` over `httpBatchLink` (`maxItems`: 1 = one
 * request per call; undefined = tRPC's batching). Recommended: its README's
 * example; defaults: `resilienceLink()`. The link does not show its breaker,
 * so the lane passes one built from the standard circuit options.
 */
export function trpcStackLane(
  name: string,
  url: string,
  settings: Settings,
  overrides: Overrides = {},
  maxItems?: number,
): StackLane {
  const options = settings === 'recommended' ? trpcRecommended() : {};
  const breaker = createCircuitBreaker({ ...STANDARD_RESILIENCE.circuit, name });
  return {
    ...trpcLane(name, [
      resilienceLink({ ...options, ...overrides, circuit: breaker }),
      trpcTerminal(url, maxItems),
    ]),
    describeError: describe,
    breakers: [breaker],
  };
}

/** One Breakwater stack: its name and how to build its lane. */
export interface StackFactory {
  name: string;
  build(
    grpcAddress: string,
    trpcUrl: string,
    overrides?: Overrides,
    trpcMaxItems?: number,
  ): StackLane;
}

/** Every Breakwater stack, recommended then defaults: `protect`, grpc-js, nice-grpc, tRPC. */
export const BREAKWATER_STACKS: readonly StackFactory[] = (
  ['recommended', 'defaults'] as const
).flatMap((s): StackFactory[] => [
  {
    name: `Breakwater protect (${s})`,
    build: (grpc, _trpc, o) => protectLane(`Breakwater protect (${s})`, grpc, s, o),
  },
  {
    name: `Breakwater grpc-js (${s})`,
    build: (grpc, _trpc, o) => grpcStackLane(`Breakwater grpc-js (${s})`, grpc, s, o),
  },
  {
    name: `Breakwater nice-grpc (${s})`,
    build: (grpc, _trpc, o) => niceStackLane(`Breakwater nice-grpc (${s})`, grpc, s, o),
  },
  {
    name: `Breakwater tRPC (${s})`,
    build: (_grpc, trpc, o, maxItems) =>
      trpcStackLane(`Breakwater tRPC (${s})`, trpc, s, o, maxItems),
  },
]);

/** A lane of every Breakwater stack. */
export function breakwaterStacks(
  grpcAddress: string,
  trpcUrl: string,
  overrides: Overrides = {},
  trpcMaxItems?: number,
): StackLane[] {
  return BREAKWATER_STACKS.map((f) => f.build(grpcAddress, trpcUrl, overrides, trpcMaxItems));
}

/** The peers of the outage-recovery suite (issue 19's list), on one gRPC and one tRPC server. */
export function peerLanes(grpcAddress: string, trpcUrl: string): StackLane[] {
  const none = { breakers: [] };
  return [
    {
      ...grpcLane('grpc-js retryPolicy', grpcAddress, grpcServiceConfig({ retry: true })),
      ...none,
    },
    {
      ...grpcLane(
        'grpc-js retryPolicy + retryThrottling',
        grpcAddress,
        grpcServiceConfig({ retry: true, throttle: true }),
      ),
      ...none,
    },
    { ...niceRetryLane('nice-grpc retry middleware', grpcAddress), ...none },
    { ...cockatielGrpcLane('cockatiel wrap(retry, circuitBreaker)', grpcAddress), ...none },
    { ...trpcLane('tRPC retryLink', trpcRetryLinks(trpcTerminal(trpcUrl, 1))), ...none },
  ];
}
