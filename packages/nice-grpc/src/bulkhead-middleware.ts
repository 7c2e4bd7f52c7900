import { type ConcurrencyOptions, createPool, isQueueFullError, type Pool } from '@breakwater/core';
import {
  type CallOptions,
  type ClientMiddleware,
  type ClientMiddlewareCall,
  Status,
} from 'nice-grpc-common';
import { abortErrorFor, refusal } from './internals/errors.js';
import type { MiddlewareResult } from './internals/next.js';
import { requireObject, resolvePart } from './internals/parts.js';

/** Options of {@link bulkheadMiddleware}: the `concurrency` part of the vocabulary. */
export type BulkheadMiddlewareOptions = ConcurrencyOptions;

/**
 * Limits concurrent calls with the core pool: `limit` at once, `maxQueue`
 * waiting. A call holds its slot until it settles — a response stream until
 * it ends — with its retries inside when this is outside the retry stage.
 * When every slot is busy and the queue is full the call is never sent: it
 * rejects with a `ClientError` `RESOURCE_EXHAUSTED` whose `cause` is the
 * `QueueFullError`. A queued call whose signal aborts leaves the queue at
 * once with an `AbortError`.
 * @example
 * createClientFactory().use(bulkheadMiddleware({ limit: 64, maxQueue: 128 }))
 */
export function bulkheadMiddleware(options: BulkheadMiddlewareOptions): ClientMiddleware {
  requireObject('bulkheadMiddleware', options);
  const plan = resolvePart('bulkheadMiddleware', 'concurrency', { concurrency: options });
  const { limit, maxQueue } = plan.concurrency as NonNullable<typeof plan.concurrency>;
  return bulkheadStage(createPool({ concurrency: limit, maxQueue }));
}

/** The bulkhead stage around `pool`. @internal */
export function bulkheadStage(pool: Pool): ClientMiddleware {
  return async function* bulkheadMiddleware<Request, Response>(
    call: ClientMiddlewareCall<Request, Response>,
    callOptions: CallOptions,
  ): MiddlewareResult<Response> {
    const signal = callOptions.signal;
    // A free slot (so an empty queue) for a live call is taken at once; otherwise the pool queues.
    const taken = !signal?.aborted && pool.tryTake();
    const release = taken ? undefined : await queued(pool, call.method.path, signal);
    let ok = false;
    try {
      const result = yield* call.next(call.request, callOptions);
      ok = true;
      return result;
    } finally {
      if (release === undefined) pool.give(ok);
      else release();
    }
  };
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
