import { DeadlineExceededError } from '@breakwater/core';
import { type InterceptingListener, type Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { breakwaterCause } from './status.js';
import type { AuthContextLike, CallLink } from './types.js';

/**
 * A pass-through call under a Breakwater deadline. grpc-js's own timer and the
 * server's (which got the deadline as `grpc-timeout`) race to end it, and
 * either ends it with a bare `DEADLINE_EXCEEDED`; this link gives that status
 * the core `DeadlineExceededError` as `cause` (the error nice-grpc's adapter
 * gives too), so `breakwaterCause(err)` tells a deadline whichever timer won.
 * @internal
 */
export class DeadlineCall implements CallLink, InterceptingListener {
  private listener: Partial<InterceptingListener> | undefined;

  constructor(
    private readonly inner: CallLink,
    private readonly timeoutMs: number,
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
  onReceiveStatus(s: StatusObject): void {
    if (s.code === status.DEADLINE_EXCEEDED && breakwaterCause(s) === undefined) {
      const cause = new DeadlineExceededError(this.timeoutMs);
      // An enumerable `cause` survives grpc-js's `callErrorFromStatus` (see statusWithCause).
      s = Object.assign({}, s, { cause });
    }
    this.listener?.onReceiveStatus?.(s);
  }
  cancelWithStatus(code: number, details: string): void {
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
