import { createPool, isQueueFullError, type Pool } from '@breakwater/core';
import { type Interceptor, status as Status } from '@grpc/grpc-js';
import { DeferredCall } from './internals/deferred-call.js';
import { type CallObserver, ObservedCall } from './internals/observed-call.js';
import { asInterceptingCall } from './internals/refused-call.js';
import { statusWithCause } from './internals/status.js';

/** Options of {@link bulkheadInterceptor}. */
export interface BulkheadInterceptorOptions {
  /** Calls in flight at most (integer >= 1). Required unless `pool` is given. */
  concurrency?: number;
  /** Calls waiting for a slot at most; 0 refuses at once. Defaults to 0. */
  maxQueue?: number;
  /** A core pool to share with other clients instead (`createPool`). Defaults to a new one. */
  pool?: Pool;
}

const releaser: CallObserver<undefined> & { release: Map<number, () => void> } = {
  release: new Map(),
  settle(_scope, permit) {
    const done = this.release.get(permit);
    this.release.delete(permit);
    done?.();
  },
};
let nextPermit = 0;

/**
 * Limits concurrent calls with the core pool. A call holds its slot from
 * start to status (retries inside included when this sits outside the retry
 * interceptor). When every slot is busy and the queue is full the call ends
 * with `RESOURCE_EXHAUSTED` whose `cause` is the `QueueFullError`, without
 * opening a stream; a queued call cancelled by its caller leaves the queue.
 */
export function bulkheadInterceptor(options: BulkheadInterceptorOptions): Interceptor {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('bulkheadInterceptor(options) needs an options object');
  }
  const pool =
    options.pool ??
    createPool({ concurrency: options.concurrency as number, maxQueue: options.maxQueue ?? 0 });
  return (callOptions, nextCall) => {
    const deferred = new DeferredCall();
    // Only a call that may wait in the queue needs a signal to leave it.
    const controller = pool.active < pool.concurrency ? undefined : new AbortController();
    const run = pool.run(
      () =>
        new Promise<void>((resolve) => {
          if (deferred.cancelled !== undefined) {
            deferred.refuse(deferred.cancelled);
            resolve();
            return;
          }
          const permit = nextPermit++ % Number.MAX_SAFE_INTEGER;
          releaser.release.set(permit, resolve);
          deferred.open(new ObservedCall(nextCall(callOptions), releaser, undefined, permit, 0));
        }),
      controller === undefined ? undefined : { signal: controller.signal },
    );
    run.catch((error: unknown) => {
      if (isQueueFullError(error)) {
        deferred.refuse(statusWithCause(Status.RESOURCE_EXHAUSTED, error.message, error));
      } else {
        deferred.refuse(
          deferred.cancelled ?? statusWithCause(Status.CANCELLED, 'Cancelled while queued', error),
        );
      }
    });
    if (controller !== undefined) {
      const cancel = deferred.cancelWithStatus.bind(deferred);
      deferred.cancelWithStatus = (code, details) => {
        cancel(code, details);
        if (deferred.cancelled !== undefined) controller.abort();
      };
    }
    return asInterceptingCall(deferred);
  };
}
