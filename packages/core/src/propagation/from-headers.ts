import { systemClock } from '../time/clock.js';
import { type InboundCall, PROPAGATION_HEADERS, parseCriticality } from './inbound.js';
import { createInboundCall } from './inbound-call.js';

const GRPC_UNIT_MS: Readonly<Record<string, number>> = {
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 0.001,
  n: 0.000_001,
};

/** A `grpc-timeout` value (`100m`, `5S`: up to 8 digits and a unit) in ms, or `undefined` when malformed. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  const match = value === undefined ? null : /^(\d{1,8})([HMSmun])$/.exec(value);
  if (match === null) return undefined;
  return Number(match[1]) * (GRPC_UNIT_MS[match[2] as string] as number);
}

function nonNegativeInteger(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * Builds the {@link InboundCall} of a request from its propagation headers
 * (either wire: `grpc-timeout` / `grpc-previous-rpc-attempts`, or
 * `x-breakwater-timeout-ms` / `x-breakwater-attempt`); a malformed header
 * counts as absent.
 */
export function inboundFromHeaders(
  headers: (name: string) => string | undefined,
  signal: AbortSignal,
  now: () => number = systemClock,
): InboundCall {
  const { grpc, http } = PROPAGATION_HEADERS;
  const remainingMs =
    nonNegativeInteger(headers(http.timeout)) ?? parseGrpcTimeout(headers(grpc.timeout));
  const attempt = nonNegativeInteger(headers(http.attempt));
  const previous = nonNegativeInteger(headers(grpc.previousAttempts));
  return createInboundCall({
    signal,
    deadline: remainingMs === undefined ? undefined : now() + remainingMs,
    attempt: attempt !== undefined && attempt >= 1 ? attempt : (previous ?? 0) + 1,
    criticality: parseCriticality(headers(http.criticality)),
  });
}
