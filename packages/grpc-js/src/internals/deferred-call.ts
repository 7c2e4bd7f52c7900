import { type InterceptingListener, Metadata, type StatusObject } from '@grpc/grpc-js';
import type { AuthContextLike, CallLink } from './types.js';

/**
 * A call whose stream opens later (a bulkhead slot frees up) or never (the
 * queue is full). It replays what the caller did meanwhile onto the real call.
 * @internal
 */
export class DeferredCall implements CallLink {
  private inner: CallLink | undefined;
  private metadata: Metadata | undefined;
  private listener: Partial<InterceptingListener> | undefined;
  private ops: Array<(call: CallLink) => void> = [];
  private ended: StatusObject | undefined;
  /** Set once the caller cancelled before the call opened. */
  cancelled: StatusObject | undefined;

  /** Opens the real call and replays the buffered operations onto it. */
  open(call: CallLink): void {
    this.inner = call;
    if (this.metadata !== undefined) call.start(this.metadata, this.listener);
    for (const op of this.ops) op(call);
    this.ops = [];
  }
  /** Ends the call with `status` without opening it. */
  refuse(status: StatusObject): void {
    if (this.ended !== undefined || this.inner !== undefined) return;
    this.ended = status;
    if (this.metadata !== undefined) {
      const listener = this.listener;
      process.nextTick(() => listener?.onReceiveStatus?.(status));
    }
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    if (this.inner !== undefined) this.inner.start(metadata, listener);
    else if (this.ended !== undefined) {
      const status = this.ended;
      process.nextTick(() => listener?.onReceiveStatus?.(status));
    }
  }
  private run(op: (call: CallLink) => void): void {
    if (this.inner !== undefined) op(this.inner);
    else if (this.ended === undefined) this.ops.push(op);
  }
  sendMessageWithContext(context: object, message: unknown): void {
    this.run((c) => c.sendMessageWithContext(context, message));
  }
  sendMessage(message: unknown): void {
    this.run((c) => c.sendMessage(message));
  }
  startRead(): void {
    this.run((c) => c.startRead());
  }
  halfClose(): void {
    this.run((c) => c.halfClose());
  }
  cancelWithStatus(code: number, details: string): void {
    if (this.inner !== undefined) {
      this.inner.cancelWithStatus(code, details);
      return;
    }
    this.cancelled = { code, details, metadata: new Metadata() };
  }
  getPeer(): string {
    return this.inner?.getPeer() ?? 'unknown';
  }
  getAuthContext(): AuthContextLike {
    return this.inner?.getAuthContext() ?? null;
  }
}
