import {
  checkOptions,
  createPool,
  isQueueFullError,
  type KnownKeys,
  optionPath,
  type Pool,
} from '@breakwater/core';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { abortErrorFor, refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
import { runAlone, type UnaryStage } from './internals/unary-stage.js';

/** Options of {@link bulkheadMiddleware}. */
export interface BulkheadMiddlewareOptions {
  /** Calls in flight at most (integer >= 1). Required unless `pool` is given. */
  concurrency?: number;
  /** Calls waiting for a slot at most; 0 refuses at once. Defaults to 0. */
  maxQueue?: number;
  /** A core pool to share with other clients instead (`createPool`). Defaults to a new one. */
  pool?: Pool;
}

/** Keys of {@link BulkheadMiddlewareOptions}. @internal */
export const BULKHEAD_KEYS = {
  concurrency: true,
  maxQueue: true,
  pool: true,
} as const satisfies KnownKeys<BulkheadMiddlewareOptions>;

/**
 * Limits concurrent calls with the core pool. A call holds its slot until it
 * settles — a response stream until it ends — with its retries inside when
 * this is outside the retry middleware. When every slot is busy and the
 * queue is full the call is never sent: it rejects with a `ClientError`
 * `RESOURCE_EXHAUSTED` whose `cause` is the `QueueFullError`. A queued call
 * whose signal aborts leaves the queue at once with an `AbortError`.
 */
export function bulkheadMiddleware(options: BulkheadMiddlewareOptions): ClientMiddleware {
  return bulkheadMiddlewareOf(optionPath('', () => bulkheadStage(options), 'bulkheadMiddleware'));
}

/** {@link bulkheadMiddleware} around its stage (shared with `resilienceMiddleware`). @internal */
export function bulkheadMiddlewareOf(stage: BulkheadStage): ClientMiddleware {
  const { pool } = stage;
  return async function* bulkheadMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    if (!call.responseStream) {
      return await runAlone(stage, call, callOptions);
    }
    const signal = callOptions.signal;
    const runOptions = signal === undefined ? undefined : { signal };
    // A stream holds its slot across yields: the pool task waits for the stream to end.
    let release = () => {};
    const done = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await new Promise<void>((admitted, reject) => {
        pool
          .run(() => {
            admitted();
            return done;
          }, runOptions)
          .catch(reject);
      });
    } catch (error) {
      throw refused(error, call.method.path, signal);
    }
    try {
      return yield* call.next(call.request, callOptions);
    } finally {
      release();
    }
  };
}

/** Why `pool.run` refused a call, in the words nice-grpc callers expect. */
function refused(error: unknown, path: string, signal: AbortSignal | undefined): unknown {
  if (isQueueFullError(error)) return refusal(path, Status.RESOURCE_EXHAUSTED, error);
  return signal?.aborted ? abortErrorFor(signal) : error;
}

/** The unary stage of {@link bulkheadMiddleware}, with its pool. @internal */
export interface BulkheadStage extends UnaryStage {
  pool: Pool;
}

/** The unary stage of {@link bulkheadMiddleware}. @internal */
export function bulkheadStage(options: BulkheadMiddlewareOptions): BulkheadStage {
  checkOptions(undefined, options, BULKHEAD_KEYS, '', false);
  const pool =
    options.pool ??
    createPool({ concurrency: options.concurrency as number, maxQueue: options.maxQueue ?? 0 });
  return {
    pool,
    async unary(call, callOptions, chain, index) {
      const signal = callOptions.signal;
      // Fast path: a free slot (so an empty queue) for a live call. The pool would run the
      // task at once; an aborted signal goes the pool's way (it counts the abort).
      if (!signal?.aborted && pool.tryTake()) {
        let ok = false;
        try {
          const response = await chain.next(call, callOptions, index);
          ok = true;
          return response;
        } finally {
          pool.give(ok);
        }
      }
      let started = false;
      try {
        return await pool.run(
          () => {
            started = true;
            return chain.next(call, callOptions, index);
          },
          signal === undefined ? undefined : { signal },
        );
      } catch (error) {
        throw started ? error : refused(error, call.method.path, signal);
      }
    },
  };
}
