import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { AuthContextLike, CallLink } from './types.js';

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
export class ObservedCall<S> implements CallLink, InterceptingListener {
  private listener: Partial<InterceptingListener> | undefined;
  private cancelled = false;
  private settled = false;

  constructor(
    private readonly inner: CallLink,
    private readonly observer: CallObserver<S>,
    private readonly scope: S,
    private readonly permit: number,
    private readonly startedAt: number,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.listener = listener;
    this.inner.start(metadata, this);
  }
  onReceiveMetadata(metadata: Metadata): void {
    this.listener?.onReceiveMetadata?.(metadata);
  }
  onReceiveMessage(message: unknown): void {
    this.listener?.onReceiveMessage?.(message);
  }
  onReceiveStatus(status: StatusObject): void {
    if (!this.settled) {
      this.settled = true;
      this.observer.settle(this.scope, this.permit, this.startedAt, status, this.cancelled);
    }
    this.listener?.onReceiveStatus?.(status);
  }
  cancelWithStatus(code: number, details: string): void {
    this.cancelled = true;
    this.inner.cancelWithStatus(code, details);
  }
  sendMessageWithContext(context: object, message: unknown): void {
    this.inner.sendMessageWithContext(context, message);
  }
  sendMessage(message: unknown): void {
    this.inner.sendMessage(message);
  }
  startRead(): void {
    this.inner.startRead();
  }
  halfClose(): void {
    this.inner.halfClose();
  }
  getPeer(): string {
    return this.inner.getPeer();
  }
  getAuthContext(): AuthContextLike {
    return this.inner.getAuthContext();
  }
}
