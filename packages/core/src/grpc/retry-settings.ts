import { optionPath, optionRangeError } from '../internal/validate.js';
import { type Backoff, type BackoffOptions, createBackoff } from '../retry/backoff.js';

/** Emitted before each retry's wait. Carries the method, numbers and the code, never payloads. */
export interface GrpcRetryEvent {
  /** Full method path. */
  path: string;
  /** The attempt that failed (1 = the first), or for a hedge the attempt outstanding. */
  attempt: number;
  /** Wait before the next attempt starts, in ms (server pushback when it sent one). */
  delayMs: number;
  /** Status code of the failed attempt (see `GrpcStatus`); `undefined` only for a nice-grpc hedge. */
  code: number | undefined;
}

const DEFAULT_BACKOFF: BackoffOptions = {
  baseDelayMs: 100,
  strategy: 'exponential',
  maxDelayMs: 5_000,
  jitter: 'full',
};

/**
 * The gRPC adapters' backoff: a ready {@link Backoff} as is, options through
 * `createBackoff`, or, when `undefined`, exponential from 100 ms with full
 * jitter capped at 5 000 ms.
 */
export function resolveBackoff(backoff: Backoff | BackoffOptions | undefined): Backoff {
  if (backoff === undefined) return createBackoff(DEFAULT_BACKOFF);
  return typeof (backoff as Backoff).delayFor === 'function'
    ? (backoff as Backoff)
    : optionPath('backoff', () => createBackoff(backoff as BackoffOptions));
}

/**
 * Validates an attempts option of a gRPC adapter: `fallback` when `undefined`,
 * else an integer >= 1, or a `RangeError` naming option `name` and the value.
 */
export function checkAttempts(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw optionRangeError(name, `must be an integer >= 1, got ${String(value)}`);
  }
  return value;
}
