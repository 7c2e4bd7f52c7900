import { PROPAGATION_HEADERS } from '@breakwater/core';
import { timeoutHeaderMs } from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import type { InterceptingListener, Metadata } from '@grpc/grpc-js';
import { ForwardingCall } from './forwarding-call.js';
import type { Stage } from './stage.js';
import type { CallLink } from './types.js';

/**
 * The innermost stage: every request, as it leaves (each attempt, after any
 * wait for a slot), carries the time left of the deadline grpc-js sends it
 * with as `x-breakwater-timeout-ms`. grpc-js hides `grpc-timeout` from server
 * handlers, so this is how a bound nice-grpc server learns its deadline;
 * stamped once for the whole call, a retry would tell it the time its earlier
 * attempts and backoff had already spent.
 * @internal
 */
export const timeLeftStage: Stage = {
  intercept(options, chain, index, final) {
    const call = chain.next(options, index, final);
    const deadline = options.deadline;
    if (deadline === undefined) return call;
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    return at === Number.POSITIVE_INFINITY ? call : new TimeLeftCall(call, at);
  },
};

class TimeLeftCall extends ForwardingCall {
  constructor(
    inner: CallLink,
    private readonly deadline: number,
  ) {
    super(inner);
  }

  override start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    metadata.set(PROPAGATION_HEADERS.http.timeout, timeoutHeaderMs(this.deadline - systemClock()));
    // Only the start needs this call: the answer goes to the listener straight.
    this.inner.start(metadata, listener);
  }
}
