import { type AdaptiveLimiters, criticalityOf, grpcLimitOutcome } from '@breakwater/core/internal';
import type { LimitPermit } from '@breakwater/core/types';
import { status as Status } from '@grpc/grpc-js';
import { type CallObserver, ObservedCall } from './observed-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { statusWithCause } from './status.js';

const releaser: CallObserver<LimitPermit> = {
  settle(permit, _n, _startedAt, status, cancelledByCaller) {
    permit.release(grpcLimitOutcome(status.code, cancelledByCaller));
  },
};

/**
 * The `concurrency: { adaptive }` stage, where the bulkhead would be: one
 * adaptive limit per method, a call holding its slot from start to status
 * (its retries included). A call over the limit for its `criticality` (a
 * per-call option, like `deadline`) ends with `RESOURCE_EXHAUSTED` whose
 * `cause` is the `ConcurrencyLimitError`, without opening a stream.
 * @internal
 */
export function adaptiveStage(limiters: AdaptiveLimiters): Stage {
  return {
    intercept(callOptions, chain, index, final) {
      const criticality = criticalityOf(
        'callOptions.criticality',
        (callOptions as { criticality?: unknown }).criticality,
      );
      const slot = limiters.limiterFor(callOptions.method_definition.path).tryAcquire(criticality);
      if (!slot.ok) {
        return new RefusedCall(
          statusWithCause(Status.RESOURCE_EXHAUSTED, slot.error.message, slot.error),
        );
      }
      let call: ReturnType<typeof final>;
      try {
        call = chain.next(callOptions, index, final);
      } catch (error) {
        slot.value.release('ignored');
        throw error;
      }
      return new ObservedCall(call, releaser, slot.value, 0, 0);
    },
  };
}
