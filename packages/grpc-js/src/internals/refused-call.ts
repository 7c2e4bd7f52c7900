import type { InterceptingCall, InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { AuthContextLike, CallLink } from './types.js';

/**
 * A call Breakwater refused: it never asks the channel for a stream and ends
 * with `status` right after `start` (asynchronously, because grpc-js calls
 * `sendMessage` and `halfClose` after `start` returns).
 * @internal
 */
export class RefusedCall implements CallLink {
  private cancelled: StatusObject | undefined;

  constructor(private readonly status: StatusObject) {}

  start(_metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    process.nextTick(() => listener?.onReceiveStatus?.(this.cancelled ?? this.status));
  }
  cancelWithStatus(code: number, details: string): void {
    this.cancelled ??= { code, details, metadata: this.status.metadata };
  }
  getPeer(): string {
    return 'unknown';
  }
  sendMessageWithContext(): void {}
  sendMessage(): void {}
  startRead(): void {}
  halfClose(): void {}
  getAuthContext(): AuthContextLike {
    return null;
  }
}

/** Types a call object as what grpc-js's `Interceptor` signature names. @internal */
export function asInterceptingCall(call: CallLink): InterceptingCall {
  // grpc-js only uses the CallLink methods of what an interceptor returns.
  return call as unknown as InterceptingCall;
}
