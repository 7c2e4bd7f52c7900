import type { ChannelInterface, InterceptingListener, Metadata, StatusObject } from '@grpc/grpc-js';
import type { RoutingTargetRuntime } from './routing-state.js';
import type { TargetAttemptError } from './target-attempt-error.js';

/** What an attempt reports to the call it belongs to. @internal */
export interface AttemptOwner {
  attemptMetadata(a: RouteAttempt, metadata: Metadata): void;
  attemptMessage(a: RouteAttempt, message: Buffer): void;
  attemptStatus(a: RouteAttempt, status: StatusObject): void;
  attemptFailure(a: RouteAttempt, status: StatusObject): TargetAttemptError;
}

let creating: RouteAttempt | undefined;
// One module-level executor instead of a closure per attempt.
function capture(resolve: () => void, reject: (error: unknown) => void): void {
  const a = creating as RouteAttempt;
  a.resolve = resolve;
  a.reject = reject;
}

/**
 * One attempt of a routed call on one target: the grpc-js listener of the
 * target channel's call, and the promise the router awaits. The promise
 * resolves when the call commits to this attempt's response (first message,
 * or an OK status) and rejects with a {@link TargetAttemptError} otherwise.
 * @internal
 */
export class RouteAttempt implements InterceptingListener {
  call!: ReturnType<ChannelInterface['createCall']>;
  resolve!: () => void;
  reject!: (error: unknown) => void;
  /** Response headers held until the call commits to this attempt. */
  heldMetadata: Metadata | undefined;
  /** A unary response held until this attempt's OK status (its target may still die before it). */
  heldMessage: Buffer | undefined;
  /** Response headers came back: the server saw the request (it is not `neverSent`). */
  headersReceived = false;
  /**
   * Cancelled by the call (another attempt answered first) or by the router (a hedge loser, an
   * attempt it cut as hung): its own status is neutral; the router judges why it ended it.
   */
  lost = false;
  settled = false;
  /** Removes the listener on the router's abort signal. */
  unwatch: (() => void) | undefined;
  readonly promise: Promise<void>;

  constructor(
    readonly owner: AttemptOwner,
    readonly target: RoutingTargetRuntime,
    /** Runs under a per-attempt deadline earlier than the call's. */
    readonly perAttempt: boolean,
  ) {
    creating = this;
    this.promise = new Promise(capture);
    creating = undefined;
  }

  onReceiveMetadata(metadata: Metadata): void {
    this.headersReceived = true;
    this.owner.attemptMetadata(this, metadata);
  }
  onReceiveMessage(message: Buffer): void {
    this.owner.attemptMessage(this, message);
  }
  onReceiveStatus(status: StatusObject): void {
    this.unwatch?.();
    this.unwatch = undefined;
    this.owner.attemptStatus(this, status);
  }

  /** The call committed to this attempt: the router records a success. */
  succeed(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve();
  }

  /** This attempt failed before commit: the router judges the error's verdict. */
  fail(status: StatusObject): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(this.owner.attemptFailure(this, status));
  }
}
