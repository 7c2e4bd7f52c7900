// The inbound call a server handler is serving, as the server bindings
// (`@breakwater/grpc-js`, `@breakwater/nice-grpc`, `@breakwater/trpc/server`)
// see it. Browser-safe: the ambient storage itself lives in
// `@breakwater/core/node`, which registers a provider here.

import { CRITICALITIES, type Criticality } from '../limit/criticality.js';

export type { Criticality };

/** The inbound call a bound server handler is serving. */
export interface InboundCall {
  /** Aborts when the inbound call is cancelled or its deadline passes. */
  readonly signal: AbortSignal;
  /** Absolute wall-clock deadline in ms (epoch ms, as `systemClock` reads), or `undefined` for none. */
  readonly deadline: number | undefined;
  /** Which attempt of the caller's call this is: 1 for the first, 2 for its first retry. */
  readonly attempt: number;
  /** The caller's criticality, or `undefined` when it sent none. */
  readonly criticality: Criticality | undefined;
  /** A downstream call ended "overloaded" (retries exhausted, budget refused, circuit open): the server answers don't-retry. */
  markOverloaded(reason: string): void;
  /** Whether {@link InboundCall.markOverloaded} was called: the answer carries don't-retry. */
  readonly overloaded: boolean;
}

/**
 * The wire names of propagation. gRPC carries the deadline as `grpc-timeout`
 * (grpc-js sets it from the call's deadline) and the attempt as
 * `grpc-previous-rpc-attempts` (attempt − 1, gRFC A6); don't-retry is the
 * trailer `grpc-retry-pushback-ms: -1` (gRFC A6). tRPC and HTTP carry the
 * remaining time, the 1-based attempt and the criticality as request headers,
 * and don't-retry as the response header `x-breakwater-retry: no`.
 */
export const PROPAGATION_HEADERS = Object.freeze({
  grpc: Object.freeze({
    timeout: 'grpc-timeout',
    previousAttempts: 'grpc-previous-rpc-attempts',
    criticality: 'x-breakwater-criticality',
    /** Response trailer; the value `-1` means don't retry. */
    pushback: 'grpc-retry-pushback-ms',
  }),
  http: Object.freeze({
    /** Remaining time of the caller's deadline, integer ms. */
    timeout: 'x-breakwater-timeout-ms',
    /** 1-based attempt number. */
    attempt: 'x-breakwater-attempt',
    criticality: 'x-breakwater-criticality',
    /** Response header; the value `no` means don't retry. */
    retry: 'x-breakwater-retry',
  }),
});

/**
 * The `x-breakwater-timeout-ms` value of a request sent with `ms` left of its
 * deadline: whole ms, rounded down (a server may read its deadline early,
 * never late), 0 once passed. Read as each request leaves, for every attempt
 * and after any wait for a slot: a value read when the call started would give
 * a retry the time its earlier attempts and backoff had already spent. @internal
 */
export function timeoutHeaderMs(ms: number): string {
  return String(Math.max(0, Math.floor(ms)));
}

/** A header's `value` as a {@link Criticality}, or `undefined` when it is not one. @internal */
export function parseCriticality(value: string | undefined): Criticality | undefined {
  return CRITICALITIES.find((c) => c === value);
}

/** Where the Node subpath registers its ambient storage; a global slot so that an ESM and a CJS copy of core share it. */
const PROVIDER = Symbol.for('@breakwater/core/inbound-provider');

type Provider = () => InboundCall | undefined;

/** Registers the function that reads the ambient inbound call (called by `@breakwater/core/node`). @internal */
export function registerInboundProvider(provider: Provider): void {
  (globalThis as { [PROVIDER]?: Provider })[PROVIDER] = provider;
}

/**
 * The inbound call the running code serves: set by a server binding around
 * its handler; `undefined` outside one (and always in browsers).
 */
export function currentInbound(): InboundCall | undefined {
  return (globalThis as { [PROVIDER]?: Provider })[PROVIDER]?.();
}
