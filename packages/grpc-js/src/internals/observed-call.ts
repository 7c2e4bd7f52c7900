import type { StatusObject } from '@grpc/grpc-js';
import { ForwardingCall } from './forwarding-call.js';
import type { CallLink } from './types.js';

/**
 * Told once how an observed call ended. Shared per interceptor, with a shared
 * per-method `scope` and a per-call number, so observing allocates no closure.
 * @internal
 */
export interface CallObserver<S> {
  settle(
    scope: S,
    permit: number,
    startedAt: number,
    status: StatusObject,
    cancelledByCaller: boolean,
  ): void;
}

/**
 * A pass-through call that reports its final status to an observer before
 * handing it on (circuit breakers and bulkheads release their permit there).
 * @internal
 */
export class ObservedCall<S> extends ForwardingCall {
  private cancelled = false;
  private settled = false;

  constructor(
    inner: CallLink,
    private readonly observer: CallObserver<S>,
    private readonly scope: S,
    private readonly permit: number,
    private readonly startedAt: number,
  ) {
    super(inner);
  }

  override onReceiveStatus(status: StatusObject): void {
    if (!this.settled) {
      this.settled = true;
      this.observer.settle(this.scope, this.permit, this.startedAt, status, this.cancelled);
    }
    this.listener?.onReceiveStatus?.(status);
  }
  override cancelWithStatus(code: number, details: string): void {
    this.cancelled = true;
    this.inner.cancelWithStatus(code, details);
  }
}
