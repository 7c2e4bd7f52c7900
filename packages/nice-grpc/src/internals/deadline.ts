import { PROPAGATION_HEADERS } from '@breakwater/core';
import { timeoutHeaderMs } from '@breakwater/core/internal';
import type { Clock } from '@breakwater/core/time';
import type { Metadata } from 'nice-grpc-common';
import { StampedMetadata } from './stamped-metadata.js';

/** The request header a gRPC server reads its deadline from (the gRPC HTTP/2 protocol). @internal */
export const TIMEOUT_HEADER = 'grpc-timeout';

/** The `deadline` call option read by every middleware (set by `deadlineMiddleware`). @internal */
export interface DeadlineOption {
  deadline?: Date | number | undefined;
}

/**
 * Epoch ms of a `deadline` call option (`Date` absolute, number relative to
 * now), `Infinity` without one.
 * @internal
 */
export function deadlineAt(deadline: Date | number | undefined, clock: Clock): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : clock() + deadline;
}

// The header holds at most 8 digits; pick the finest unit that fits (as grpc-js does).
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['m', 1],
  ['S', 1_000],
  ['M', 60_000],
  ['H', 3_600_000],
];

/** `grpc-timeout` value for `ms` from now, rounded up. @internal */
export function timeoutHeaderValue(ms: number): string {
  const left = Math.max(0, ms);
  // Any timeout under 27 hours fits in milliseconds.
  if (left < 99_999_999) return `${Math.ceil(left)}m`;
  for (const [unit, factor] of UNITS) {
    const amount = Math.ceil(left / factor);
    if (amount < 1e8) return `${amount}${unit}`;
  }
  return '99999999H';
}

/**
 * `metadata` carrying `grpc-timeout` for `ms`, without changing it. nice-grpc
 * hands grpc-js no call options, so grpc-js never sets the header itself and
 * sends this one as is; the server derives its deadline from it. grpc-js hides
 * `grpc-timeout` from server handlers, so `x-breakwater-timeout-ms` carries
 * the same time left to a bound nice-grpc server; both are stamped on every
 * send (each attempt), as it leaves.
 * @internal
 */
export function withTimeoutHeader(metadata: Metadata | undefined, ms: number): Metadata {
  const withGrpc = new StampedMetadata(metadata, TIMEOUT_HEADER, timeoutHeaderValue(ms));
  return new StampedMetadata(withGrpc, PROPAGATION_HEADERS.http.timeout, timeoutHeaderMs(ms));
}
