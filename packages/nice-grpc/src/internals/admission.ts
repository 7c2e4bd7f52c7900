import {
  type CallOutcome,
  isProbePermit,
  isQueueFullError,
  type Pool,
  type TokenBucket,
} from '@breakwater/core';
import type { GrpcCircuits } from '@breakwater/core/grpc';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { abortErrorFor, failureStatus, refusal } from './errors.js';
import type { MiddlewareResult } from './next.js';

/** What admits a call before its attempts: any of a circuit registry, a token bucket, a pool. @internal */
export interface Admission {
  circuits?: GrpcCircuits | undefined;
  bucket?: TokenBucket | undefined;
  pool?: Pool | undefined;
}

/**
 * The circuit, rate-limit and concurrency stage, in that order: an open
 * circuit refuses before a token or a slot is spent; a refused token or slot
 * (`RESOURCE_EXHAUSTED`, never sent) is neutral for the circuit; a call
 * counts once for its circuit (a half-open probe runs with `retry: false,
 * hedge: false`), takes one token and holds one slot — a
 * response stream until it ends — whatever its attempts. Each single-purpose
 * middleware is this stage with one part; `resilienceMiddleware` runs it
 * with all three as one step.
 * @internal
 */
export function admissionStage({ circuits, bucket, pool }: Admission): ClientMiddleware {
  const clock = circuits?.clock;
  return async function* admission<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const path = call.method.path;
    const method = circuits?.methodCircuit(path);
    const permit = method === undefined ? -1 : method.breaker.tryAcquire();
    if (method !== undefined && permit < 0) {
      throw refusal(path, Status.UNAVAILABLE, (circuits as GrpcCircuits).openError(method));
    }
    const startedAt = clock === undefined ? 0 : clock();
    // A stream its consumer leaves early ends in `finally` with neither result: neutral.
    let outcome: CallOutcome = 'neutral';
    let taken = false;
    let release: (() => void) | undefined;
    try {
      if (bucket !== undefined) {
        const token = bucket.tryAcquire();
        if (!token.ok) throw refusal(path, Status.RESOURCE_EXHAUSTED, token.error);
      }
      if (pool !== undefined) {
        const signal = callOptions.signal;
        // A free slot (so an empty queue) for a live call is taken at once; otherwise the pool queues.
        taken = !signal?.aborted && pool.tryTake();
        if (!taken) release = await queued(pool, path, signal);
      }
      // A half-open probe is never retried or hedged below: one attempt, whose failure re-opens the circuit.
      const below = isProbePermit(permit) ? probeOptions(callOptions) : callOptions;
      const result = yield* call.next(call.request, below);
      outcome = 'success';
      return result;
    } catch (error) {
      const status = method === undefined ? undefined : failureStatus(error, callOptions.signal);
      if (status !== undefined) {
        outcome = (circuits as GrpcCircuits).outcomeOf(
          path,
          status.code,
          status.details,
          undefined,
          false,
          isProbePermit(permit),
        );
      }
      throw error;
    } finally {
      if (taken) (pool as Pool).give(outcome === 'success');
      else release?.();
      if (method !== undefined)
        method.breaker.release(permit, outcome, (clock as () => number)() - startedAt);
    }
  };
}

/** The options a probe runs with below the circuit: the retry stage's per-call `retry: false, hedge: false`. */
function probeOptions(options: CallOptions): CallOptions {
  return Object.assign({}, options, { retry: false, hedge: false });
}

/** Waits for a slot in the pool's queue; resolves with the function that gives it back. */
function queued(pool: Pool, path: string, signal: AbortSignal | undefined): Promise<() => void> {
  return new Promise((admitted, refused) => {
    // The pool task holds the slot until the call lets `done` resolve.
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    pool
      .run(
        () => {
          admitted(release);
          return done;
        },
        signal === undefined ? undefined : { signal },
      )
      .catch((error: unknown) => {
        if (isQueueFullError(error)) refused(refusal(path, Status.RESOURCE_EXHAUSTED, error));
        else refused(signal?.aborted ? abortErrorFor(signal) : error);
      });
  });
}
