/**
 * The clients the adapters suite compares, built from plain data (adapter,
 * variant, server address) so that each can be built inside its own client
 * process by `harness/lane-child.ts`.
 */
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import type { DeadlineBaseline } from '../harness/adapter-report.js';
import {
  breakwaterGrpcLane,
  breakwaterGrpcOptions,
  breakwaterNiceLane,
  breakwaterNiceOptions,
  breakwaterTrpcLinks,
  grpcLane,
  type Lane,
  niceBareLane,
  niceDeadlineEnforcedLane,
  nicePassThroughLane,
  trpcLane,
  trpcTerminal,
} from './clients.js';

/** The adapters measured. */
export type AdapterName = 'grpc-js' | 'nice-grpc' | 'trpc';

/**
 * The lanes of one comparison: the headline pair, then the controls.
 * `bareAgain` is a second, identical bare client (A/A); `bareDeadline` the
 * bare client sending the stack's deadline (grpc-js also enforces it, nice-grpc
 * only sends it); `bareDeadlineEnforced` (nice-grpc) the bare client sending it
 * and enforcing it with the official deadline middleware, as the stack does;
 * `stackNoDeadline` the stack without its deadline part (the deadline lanes
 * only where the stack sends one).
 * `passThroughDeadline` (gRPC adapters, not in a default run): the bare +
 * deadline client with one interceptor (grpc-js) or middleware (nice-grpc)
 * that only passes calls on — the framework's own cost of a pass-through layer.
 */
export type Variant =
  | 'bare'
  | 'stack'
  | 'bareDeadline'
  | 'bareDeadlineEnforced'
  | 'stackNoDeadline'
  | 'bareAgain'
  | 'passThroughDeadline';

/** What a lane child is asked to build. */
export interface LaneSpec {
  adapter: AdapterName;
  variant: Variant;
  /** gRPC `host:port`, or the tRPC server's base URL. */
  address: string;
}

// The full stack adds what the fault runs leave out: a bulkhead and a rate limit that never refuse.
export const BULKHEAD = { concurrency: 10_000 };
export const RATE_LIMIT = { capacity: 1e9, refillPerSecond: 1e9 };
/** The deadline every stack sets on each call, also sent (gRPC) or enforced by the "bare + deadline" lanes. */
export const DEADLINE_MS = 10_000;

/** Variants of each adapter, in the order of the first round. */
export const VARIANTS: Readonly<Record<AdapterName, readonly Variant[]>> = {
  'grpc-js': ['bare', 'stack', 'bareDeadline', 'stackNoDeadline', 'bareAgain'],
  'nice-grpc': [
    'bare',
    'stack',
    'bareDeadline',
    'bareDeadlineEnforced',
    'stackNoDeadline',
    'bareAgain',
  ],
  trpc: ['bare', 'stack', 'bareDeadlineEnforced', 'bareAgain'],
};

/**
 * The bare clients sending the stack's deadline that each adapter's stack is
 * compared with, like for like, and what each does with the deadline.
 */
export const DEADLINE_BASELINES: Readonly<Record<AdapterName, readonly DeadlineBaseline[]>> = {
  'grpc-js': [
    {
      variant: 'bareDeadline',
      label: '`deadline` call option (sent, and enforced by grpc-js’s own timer)',
    },
  ],
  'nice-grpc': [
    { variant: 'bareDeadline', label: 'deadline header (sent, not enforced)' },
    {
      variant: 'bareDeadlineEnforced',
      label: 'deadline header + nice-grpc-client-middleware-deadline (sent and enforced)',
    },
  ],
  // tRPC has no deadline on the wire: its idiomatic per-call timeout is an abort signal.
  trpc: [
    {
      variant: 'bareDeadlineEnforced',
      label: '`signal: AbortSignal.timeout(10 s)` per call (enforced; tRPC sends no deadline)',
    },
  ],
};

/** Display name of each adapter. */
export const ADAPTER_TITLES: Readonly<Record<AdapterName, string>> = {
  'grpc-js': 'grpc-js',
  'nice-grpc': 'nice-grpc',
  trpc: 'tRPC (httpBatchLink)',
};

/** What each adapter's full stack is. */
export const STACK_DESCRIPTIONS: Readonly<Record<AdapterName, string>> = {
  'grpc-js':
    'resilienceInterceptor: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
  'nice-grpc':
    'resilienceMiddleware: deadline 10 s, circuit breaker, rate limit, bulkhead, retry (3 attempts, budget)',
  trpc: 'resilienceLink: bulkhead, rate limit, timeout 10 s, retry (3 attempts, budget), circuit breaker',
};

/** A grpc-js interceptor that only passes calls on: what any interceptor costs in grpc-js itself. */
const passThroughInterceptor: Interceptor = (options, next) => new InterceptingCall(next(options));

/** Builds the client of `spec`. */
export function adapterLane({ adapter, variant, address }: LaneSpec): Lane {
  const bulkhead = BULKHEAD;
  const rateLimit = RATE_LIMIT;
  switch (adapter) {
    case 'grpc-js':
      switch (variant) {
        case 'bare':
        case 'bareAgain':
          return grpcLane(variant, address);
        case 'bareDeadline':
          return grpcLane(variant, address, {}, DEADLINE_MS);
        case 'passThroughDeadline':
          return grpcLane(
            variant,
            address,
            { interceptors: [passThroughInterceptor] },
            DEADLINE_MS,
          );
        case 'stack':
          return breakwaterGrpcLane(
            variant,
            address,
            breakwaterGrpcOptions({ concurrency: { limit: bulkhead.concurrency }, rateLimit }),
          );
        case 'stackNoDeadline':
          return breakwaterGrpcLane(
            variant,
            address,
            breakwaterGrpcOptions({
              concurrency: { limit: bulkhead.concurrency },
              rateLimit,
              timeoutMs: false,
            }),
          );
      }
      break;
    case 'nice-grpc':
      switch (variant) {
        case 'bare':
        case 'bareAgain':
          return niceBareLane(variant, address);
        case 'bareDeadline':
          return niceBareLane(variant, address, DEADLINE_MS);
        case 'bareDeadlineEnforced':
          return niceDeadlineEnforcedLane(variant, address, DEADLINE_MS);
        case 'passThroughDeadline':
          return nicePassThroughLane(variant, address, DEADLINE_MS);
        case 'stack':
          return breakwaterNiceLane(variant, address, {
            ...breakwaterNiceOptions(),
            concurrency: { limit: bulkhead.concurrency },
            rateLimit,
          });
        case 'stackNoDeadline':
          return breakwaterNiceLane(variant, address, {
            ...breakwaterNiceOptions(),
            concurrency: { limit: bulkhead.concurrency },
            rateLimit,
            timeoutMs: false,
          });
      }
      break;
    case 'trpc':
      switch (variant) {
        case 'bare':
        case 'bareAgain':
          return trpcLane(variant, [trpcTerminal(address)]);
        case 'bareDeadlineEnforced':
          return trpcLane(variant, [trpcTerminal(address)], DEADLINE_MS);
        case 'stack':
          return trpcLane(
            variant,
            breakwaterTrpcLinks(trpcTerminal(address), {
              concurrency: { limit: bulkhead.concurrency },
              rateLimit,
            }),
          );
        default:
          break;
      }
      break;
  }
  throw new TypeError(`no ${variant} lane for ${adapter}`);
}
