import type { InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { AuthContextLike, CallLink } from './types.js';

/**
 * A call that passes everything through to `inner` and its listener;
 * subclasses override the one or two hooks they care about (the final status,
 * a caller's cancel).
 * @internal
 */
export abstract class ForwardingCall implements CallLink, InterceptingListener {
  protected listener: Partial<InterceptingListener> | undefined;

  constructor(protected readonly inner: CallLink) {}

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
    this.listener?.onReceiveStatus?.(status);
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
