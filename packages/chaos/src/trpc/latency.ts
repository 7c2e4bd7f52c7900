import type { RandomSource } from '@breakwater/core/time';
import type { LatencySpec } from '../grpc/faults.js';

// The tRPC server shares the gRPC server's latency shape, so one schedule type
// describes both; only the validation message prefix differs.

function nonNegative(name: string, value: unknown): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite number >= 0, got ${String(value)}`);
  }
}

/** Throws `TypeError`/`RangeError` naming the bad field of `latency`. @internal */
export function checkLatency(name: string, latency: LatencySpec): void {
  if (latency.kind === 'fixed') {
    nonNegative(`${name}.ms`, latency.ms);
    return;
  }
  if (latency.kind === 'uniform') {
    nonNegative(`${name}.minMs`, latency.minMs);
    nonNegative(`${name}.maxMs`, latency.maxMs);
    if (latency.maxMs < latency.minMs) {
      throw new RangeError(`${name}.maxMs must be >= minMs, got ${latency.maxMs}`);
    }
    return;
  }
  if (latency.kind === 'tail') {
    nonNegative(`${name}.baseMs`, latency.baseMs ?? 0);
    nonNegative(`${name}.extraMs`, latency.extraMs);
    if (!(latency.percent >= 0 && latency.percent <= 100)) {
      throw new RangeError(`${name}.percent must be in [0, 100], got ${String(latency.percent)}`);
    }
    return;
  }
  throw new TypeError(`${name}.kind must be 'fixed', 'uniform' or 'tail'`);
}

/** Draws one delay in ms from `latency`. @internal */
export function drawLatency(latency: LatencySpec, random: RandomSource): number {
  if (latency.kind === 'fixed') return latency.ms;
  if (latency.kind === 'uniform') return latency.minMs + random() * (latency.maxMs - latency.minMs);
  return (latency.baseMs ?? 0) + (random() * 100 < latency.percent ? latency.extraMs : 0);
}
