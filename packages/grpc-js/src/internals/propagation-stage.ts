import type { ErrorVerdict } from '@breakwater/core';
import { DeadlineExceededError, PROPAGATION_HEADERS } from '@breakwater/core';
import type { GrpcStatusClassifier } from '@breakwater/core/grpc';
import {
  type Inheritance,
  inheritInbound,
  onInboundCancel,
  type PropagatePlan,
} from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import {
  type InterceptingListener,
  type Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import { ForwardingCall } from './forwarding-call.js';
import { RefusedCall } from './refused-call.js';
import type { Stage } from './stage.js';
import { breakwaterCause, statusWithCause } from './status.js';
import type { CallLink } from './types.js';

/** Per-call options the stage reads: `{ propagate: false }` beside grpc-js's call options opts one call out. */
interface PropagateCallOption {
  propagate?: false;
}

/**
 * The outermost stage inside a bound server handler: the call's deadline
 * becomes the inbound deadline less the margin when that is earlier, the call
 * is cancelled when the inbound call is, it carries the inbound criticality,
 * and an overloaded end tells the inbound call to answer don't-retry.
 * @internal
 */
export function propagationStage(
  plan: PropagatePlan | undefined,
  timeoutMs: number,
  classify: GrpcStatusClassifier,
): Stage {
  return {
    intercept(options, chain, index, final) {
      const inherited = inheritInbound(plan, (options as PropagateCallOption).propagate);
      if (inherited === undefined) return chain.next(options, index, final);
      const own = Math.min(
        options.deadline === undefined ? Number.POSITIVE_INFINITY : +options.deadline,
        systemClock() + timeoutMs,
      );
      if (inherited.remainingMs() <= 0) {
        const cause = new DeadlineExceededError(0);
        return new RefusedCall(statusWithCause(Status.DEADLINE_EXCEEDED, cause.message, cause));
      }
      const deadline = Math.min(own, inherited.deadline ?? Number.POSITIVE_INFINITY);
      const down = deadline < own ? Object.assign({}, options, { deadline }) : options;
      const path = options.method_definition.path;
      return new InheritingCall(chain.next(down, index, final), inherited, (status) =>
        classify({ path, code: status.code, trailer: trailerGetter(status.metadata) }),
      );
    },
  };
}

class InheritingCall extends ForwardingCall {
  private stopWaiting: (() => void) | undefined;

  constructor(
    inner: CallLink,
    private readonly inherited: Inheritance,
    private readonly judge: (status: StatusObject) => ErrorVerdict,
  ) {
    super(inner);
  }

  override start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    // The time left travels with each attempt (the time-left stage), not once here.
    const inbound = this.inherited.inbound;
    if (inbound.criticality !== undefined) {
      metadata.set(PROPAGATION_HEADERS.grpc.criticality, inbound.criticality);
    }
    this.stopWaiting = onInboundCancel(inbound, () =>
      this.inner.cancelWithStatus(Status.CANCELLED, 'Cancelled: the inbound call was cancelled'),
    );
    super.start(metadata, listener);
  }

  override onReceiveStatus(status: StatusObject): void {
    this.stopWaiting?.();
    if (status.code === Status.OK) this.inherited.succeeded();
    else this.inherited.failed(breakwaterCause(status) ?? status, this.judge(status));
    super.onReceiveStatus(status);
  }
}
