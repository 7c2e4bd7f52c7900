import { DeadlineExceededError } from '@breakwater/core';
import { type StatusObject, status } from '@grpc/grpc-js';
import { ForwardingCall } from './forwarding-call.js';
import { breakwaterCause } from './status.js';
import type { CallLink } from './types.js';

/**
 * A pass-through call under a Breakwater deadline. grpc-js's own timer and the
 * server's (which got the deadline as `grpc-timeout`) race to end it, and
 * either ends it with a bare `DEADLINE_EXCEEDED`; this link gives that status
 * the core `DeadlineExceededError` as `cause` (the error nice-grpc's adapter
 * gives too), so `breakwaterCause(err)` tells a deadline whichever timer won.
 * @internal
 */
export class DeadlineCall extends ForwardingCall {
  constructor(
    inner: CallLink,
    private readonly timeoutMs: number,
  ) {
    super(inner);
  }

  override onReceiveStatus(s: StatusObject): void {
    if (s.code === status.DEADLINE_EXCEEDED && breakwaterCause(s) === undefined) {
      const cause = new DeadlineExceededError(this.timeoutMs);
      // An enumerable `cause` survives grpc-js's `callErrorFromStatus` (see statusWithCause).
      s = Object.assign({}, s, { cause });
    }
    this.listener?.onReceiveStatus?.(s);
  }
}
