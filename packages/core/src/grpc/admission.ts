import type { LimitPermit } from '../limit/adaptive-limiter.js';
import { admitCall } from '../limit/admission.js';
import { criticalityOf } from '../limit/criticality.js';
import type { AdaptiveLimiters } from '../limit/limiters.js';
import type { TokenBucket } from '../limit/token-bucket.js';
import type { Pool } from '../pool/pool.js';
import type { GrpcCircuits, GrpcMethodCircuit } from './circuits.js';
import { GrpcStatus } from './status.js';

/** What admits a gRPC adapter's call before its attempts: each part is left out when its option is off. @internal */
export interface GrpcAdmissionParts {
  /** `circuit`: one breaker per method. */
  readonly circuits?: GrpcCircuits | undefined;
  /** `rateLimit`: one token per call. */
  readonly bucket?: TokenBucket | undefined;
  /** `concurrency`: the bulkhead every method shares. */
  readonly pool?: Pool | undefined;
  /** `concurrency.adaptive`: one limit per method, instead of the pool. */
  readonly limiters?: AdaptiveLimiters | undefined;
}

/** A gRPC call admitted (what it holds, as `admitCall` says) or refused with the status its adapter ends it with. @internal */
export type GrpcAdmission =
  | {
      readonly admitted: true;
      /** The method's circuit, when there is one: its breaker gets the permit back. */
      readonly method: GrpcMethodCircuit | undefined;
      readonly permit: number;
      readonly limit: LimitPermit | undefined;
      readonly slot: 'taken' | 'queue' | 'none';
    }
  | { readonly admitted: false; readonly code: number; readonly error: Error };

/**
 * Admits one call of method `path` in core's one order (`admitCall`: circuit
 * → rate limit → slot), the same for every gRPC adapter. A refused call is
 * never sent: an open circuit ends it `UNAVAILABLE` with the
 * `CircuitOpenError`, a rate limit, an adaptive limit or a full queue
 * `RESOURCE_EXHAUSTED` with the core error. `criticality` is the call's
 * per-call option, read (and checked) only under an adaptive limit.
 * @internal
 */
export function admitGrpcCall(
  parts: GrpcAdmissionParts,
  path: string,
  criticality: unknown,
): GrpcAdmission {
  const { circuits, bucket, pool, limiters } = parts;
  const method = circuits?.methodCircuit(path);
  const limiter = limiters?.limiterFor(path);
  const admission = admitCall(
    { breaker: method?.breaker, bucket, limiter, pool },
    limiter === undefined ? undefined : criticalityOf('callOptions.criticality', criticality),
  );
  if (admission.admitted) return { ...admission, method };
  if (admission.reason === 'circuit-open') {
    const error = (circuits as GrpcCircuits).openError(method as GrpcMethodCircuit);
    return { admitted: false, code: GrpcStatus.UNAVAILABLE, error };
  }
  return { admitted: false, code: GrpcStatus.RESOURCE_EXHAUSTED, error: admission.error };
}
