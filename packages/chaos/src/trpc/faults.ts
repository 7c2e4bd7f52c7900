import type { RandomSource } from '@breakwater/core/time';
import type { LatencySpec } from '../grpc/faults.js';
import { checkLatency, drawLatency } from './latency.js';

/**
 * How an injected failure looks on the wire.
 * - `status`: a tRPC-shaped JSON error with that HTTP status (default 503),
 *   as an overloaded tRPC server would send it.
 * - `html`: an HTML error page (default 502), as a reverse proxy sends it;
 *   tRPC's own `fetch` handling loses this status.
 * - `reset`: the socket is destroyed without an answer.
 */
export type TrpcInjectedError =
  | {
      /** A tRPC JSON error body, one entry per call of a batch. */
      type: 'status';
      /** HTTP status of the response. Defaults to 503. */
      status?: number;
      /** Sent as the `Retry-After` header, in seconds; a string is sent verbatim (for malformed values). Defaults to no header. */
      retryAfterSeconds?: number | string;
    }
  | {
      /** A reverse proxy's HTML error page. */
      type: 'html';
      /** HTTP status of the response. Defaults to 502. */
      status?: number;
      /** Sent as the `Retry-After` header, in seconds; a string is sent verbatim. Defaults to no header. */
      retryAfterSeconds?: number | string;
    }
  | {
      /** The socket is destroyed without a response. */
      type: 'reset';
    };

/** What one attempt of a call gets (see {@link TrpcFaultPlan.steps}). */
export interface TrpcAttemptFault {
  /** Fail the attempt like this. Defaults to answering it. */
  error?: TrpcInjectedError;
  /** Wait this long (ms) before failing or answering. Defaults to 0. */
  delayMs?: number;
  /** Never answer the attempt. Defaults to false. */
  hang?: boolean;
}

/** The fault schedule a chaos tRPC server applies to each HTTP request. */
export interface TrpcFaultPlan {
  /**
   * A script per attempt: step `i` decides attempt `i + 1` of each call id (alone: the rest of
   * the plan does not apply to it); later attempts get the rest of the plan. Defaults to none.
   */
  steps?: readonly TrpcAttemptFault[];
  /** Share of requests that fail with `error`, in [0, 1]. Defaults to 0. */
  errorRate?: number;
  /** The first `failFirst` attempts of each call id fail with `error`. Defaults to 0. */
  failFirst?: number;
  /** What a failing request gets. Defaults to `{ type: 'status', status: 503 }`. */
  error?: TrpcInjectedError;
  /** Latency added before the request is handled. Defaults to none. */
  latency?: LatencySpec;
  /** Share of requests that are never answered, in [0, 1]. Defaults to 0. */
  hangRate?: number;
  /** Server-sent event streams are cut after this many data events. Defaults to never. */
  dropStreamAfter?: number;
  /** How many streams `dropStreamAfter` cuts before it stops. Defaults to every stream. */
  dropStreamTimes?: number;
  /** Only requests touching one of these procedure paths get faults. Defaults to all. */
  paths?: readonly string[];
  /**
   * The server's `/healthz` says `NOT_SERVING` (503) while this plan holds,
   * pushed to its watchers; `SERVING` (200) otherwise. Defaults to false.
   */
  notServing?: boolean;
}

/** What the fault layer decided for one request. @internal */
export interface FaultDecision {
  delayMs: number;
  action: 'pass' | 'error' | 'hang';
  /** The error of a scripted step, over the plan's `error`. */
  error?: TrpcInjectedError | undefined;
}

function rate(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) {
    throw new RangeError(`${name} must be a number in [0, 1], got ${String(value)}`);
  }
}

function count(name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be an integer >= 0, got ${String(value)}`);
  }
}

/** Throws `TypeError`/`RangeError` naming the bad field of `plan`. @internal */
export function checkFaultPlan(plan: TrpcFaultPlan): void {
  if (typeof plan !== 'object' || plan === null) {
    throw new TypeError(`faults must be an object, got ${String(plan)}`);
  }
  if (plan.notServing !== undefined && typeof plan.notServing !== 'boolean') {
    throw new TypeError(`faults.notServing must be a boolean, got ${String(plan.notServing)}`);
  }
  rate('faults.errorRate', plan.errorRate);
  rate('faults.hangRate', plan.hangRate);
  count('faults.failFirst', plan.failFirst);
  if (plan.dropStreamAfter !== undefined && plan.dropStreamAfter < 1) {
    throw new RangeError(`faults.dropStreamAfter must be >= 1, got ${plan.dropStreamAfter}`);
  }
  count('faults.dropStreamAfter', plan.dropStreamAfter);
  count('faults.dropStreamTimes', plan.dropStreamTimes);
  if (plan.latency) checkLatency('faults.latency', plan.latency);
  if (plan.steps !== undefined && !Array.isArray(plan.steps)) {
    throw new TypeError('faults.steps must be an array');
  }
  plan.steps?.forEach((step, i) => {
    const d = step.delayMs;
    if (d !== undefined && !(typeof d === 'number' && d >= 0 && Number.isFinite(d))) {
      throw new RangeError(`faults.steps[${i}].delayMs must be a number >= 0, got ${String(d)}`);
    }
  });
  const type = plan.error?.type;
  if (type !== undefined && type !== 'status' && type !== 'html' && type !== 'reset') {
    throw new TypeError(
      `faults.error.type must be 'status', 'html' or 'reset', got ${JSON.stringify(type)}`,
    );
  }
}

/** Draws the fault for one request; `attempt` counts from 1 per call id. @internal */
export function decideFault(
  plan: TrpcFaultPlan,
  attempt: number,
  random: RandomSource,
): FaultDecision {
  const step = plan.steps?.[attempt - 1];
  if (step !== undefined) {
    const action = step.hang ? 'hang' : step.error ? 'error' : 'pass';
    return { delayMs: step.delayMs ?? 0, action, error: step.error };
  }
  const delayMs = plan.latency ? drawLatency(plan.latency, random) : 0;
  if (plan.hangRate && random() < plan.hangRate) return { delayMs, action: 'hang' };
  if (plan.failFirst && attempt <= plan.failFirst) return { delayMs, action: 'error' };
  if (plan.errorRate && random() < plan.errorRate) return { delayMs, action: 'error' };
  return { delayMs, action: 'pass' };
}
