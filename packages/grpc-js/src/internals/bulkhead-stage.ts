import { isQueueFullError } from '@breakwater/core';
import type { Pool } from '@breakwater/core/types';
import { status as Status } from '@grpc/grpc-js';
import { DeferredCall } from './deferred-call.js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { statusWithCause } from './status.js';

// A call in a taken slot gives it back at its status (the pool counts it completed,
// as a queued call's task that resolves at its status is).
const giver: CallObserver<Pool> = {
  settle(slots) {
    slots.give(true);
  },
};

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
 * The `concurrency` stage (a bulkhead on the core pool): a call holds its
 * slot from start to status, its retries and backoff included (this stage
 * sits outside them). When every slot is busy and the queue is full the call
 * ends with `RESOURCE_EXHAUSTED` whose `cause` is the `QueueFullError`,
 * without opening a stream; a queued call cancelled by its caller leaves the queue.
 * @internal
 */
export function bulkheadStage(pool: Pool): Stage {
  return {
    intercept(callOptions, chain, index, final) {
      // Fast path: a free slot (so an empty queue) is taken at once, no deferral needed.
      if (pool.tryTake()) {
        let call: ReturnType<typeof final>;
        try {
          call = chain.next(callOptions, index, final);
        } catch (error) {
          // As a throwing pool task: the slot counts failed, the call ends CANCELLED.
          pool.give(false);
          return new RefusedCall(
            statusWithCause(Status.CANCELLED, 'Cancelled while queued', error),
          );
        }
        return new ObservedCall(call, giver, pool, 0, 0);
      }
      return queued(pool, callOptions, chain, index, final);
    },
  };
}

/** A call that waits for a slot (or is refused), through the pool's queue. */
function queued(
  pool: Pool,
  callOptions: Parameters<Stage['intercept']>[0],
  chain: Parameters<Stage['intercept']>[1],
  index: number,
  final: Parameters<Stage['intercept']>[3],
): DeferredCall {
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
        deferred.open(
          new ObservedCall(chain.next(callOptions, index, final), releaser, undefined, permit, 0),
        );
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
  return deferred;
}
