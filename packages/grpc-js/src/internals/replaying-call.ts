import { PREVIOUS_ATTEMPTS_HEADER } from '@breakwater/core/grpc';
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import type { StageChain } from './stage.js';
import type { AuthContextLike, CallLink } from './types.js';

/** One attempt: the listener grpc-js calls for it, and what it buffered before commit. @internal */
export class Attempt implements InterceptingListener {
  call: CallLink | undefined;
  metadata: Metadata | undefined;
  headersReceived = false;
  message: unknown;
  hasMessage = false;

  constructor(
    private readonly owner: ReplayingCall,
    readonly index: number,
    readonly perAttemptDeadline: boolean,
    /** Clock time the attempt started. */
    readonly startedAt: number,
  ) {}
  onReceiveMetadata(metadata: Metadata): void {
    this.headersReceived = true;
    this.owner.onMetadata(this, metadata);
  }
  onReceiveMessage(message: unknown): void {
    this.owner.onMessage(this, message);
  }
  onReceiveStatus(status: StatusObject): void {
    this.owner.onStatus(this, status);
  }
}

/**
 * The grpc-js side of a call made of several attempts, with no policy in it:
 * it buffers the request metadata and message and replays them (with
 * `grpc-previous-rpc-attempts`) on every attempt it is asked to start, holds
 * each attempt's response until it commits to one (unary: at its status;
 * server streaming: at its first message), cancels the others, and reports
 * once. When an uncommitted attempt fails, {@link attemptFailed} decides.
 * @internal
 */
export abstract class ReplayingCall implements CallLink {
  protected listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private message: unknown;
  private hasMessage = false;
  private halfClosed = false;
  private readPending = false;
  protected live: Attempt[] = [];
  protected started = 0;
  protected committed: Attempt | undefined;
  protected finished = false;
  protected cancelled = false;

  constructor(
    private readonly responseStream: boolean,
    protected readonly options: InterceptorOptions,
    private readonly chain: StageChain,
    private readonly index: number,
    private readonly final: NextCall,
  ) {}

  /** An uncommitted attempt ended with a non-OK status while the caller still waits. */
  protected abstract attemptFailed(a: Attempt, status: StatusObject): void;
  /** The call ended (reported, or cancelled between attempts): drop pending waits. */
  protected abstract ended(): void;

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
  }
  sendMessageWithContext(context: object, message: unknown): void {
    this.message = message;
    this.hasMessage = true;
    for (const a of this.live) a.call?.sendMessageWithContext(context, message);
  }
  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }
  halfClose(): void {
    this.halfClosed = true;
    for (const a of this.live) a.call?.halfClose();
  }
  startRead(): void {
    if (this.committed) {
      this.committed.call?.startRead();
      return;
    }
    this.readPending = true;
    for (const a of this.live) a.call?.startRead();
  }
  cancelWithStatus(code: Status, details: string): void {
    if (this.finished || this.cancelled) return;
    this.cancelled = true;
    this.ended();
    if (this.live.length === 0) {
      // Between attempts nothing is in flight: grpc-js would cancel a finished call, so end here.
      this.finish({ code, details, metadata: new Metadata() });
      return;
    }
    for (const a of this.live.slice()) a.call?.cancelWithStatus(code, details);
  }
  getPeer(): string {
    return (this.committed ?? this.live[this.live.length - 1])?.call?.getPeer() ?? 'unknown';
  }
  getAuthContext(): AuthContextLike {
    return (this.committed ?? this.live[this.live.length - 1])?.call?.getAuthContext() ?? null;
  }

  onMetadata(a: Attempt, metadata: Metadata): void {
    if (this.committed === a) this.listener?.onReceiveMetadata?.(metadata);
    else if (this.committed === undefined) a.metadata = metadata;
  }

  onMessage(a: Attempt, message: unknown): void {
    if (this.committed === a) {
      this.readPending = false;
      this.listener?.onReceiveMessage?.(message);
      return;
    }
    if (this.committed !== undefined) return;
    a.message = message;
    a.hasMessage = true;
    // A response stream commits at its first message: what was delivered cannot be replayed.
    if (this.responseStream) {
      this.commit(a);
      this.readPending = false;
      this.flush(a);
    }
  }

  onStatus(a: Attempt, status: StatusObject): void {
    const at = this.live.indexOf(a);
    if (at >= 0) this.live.splice(at, 1);
    if (this.finished || (this.committed !== undefined && this.committed !== a)) return;
    if (this.committed === a || status.code === Status.OK || this.cancelled) {
      this.report(a, status);
      return;
    }
    this.attemptFailed(a, status);
  }

  /** Starts attempt `started + 1` at `startedAt` under `options`, replaying what the caller sent so far. */
  protected startAttempt(
    options: InterceptorOptions,
    perAttemptDeadline: boolean,
    startedAt: number,
  ): void {
    const index = ++this.started;
    const attempt = new Attempt(this, index, perAttemptDeadline, startedAt);
    let call: CallLink;
    try {
      call = this.chain.next(options, this.index, this.final);
    } catch (error) {
      // The first attempt throws to the caller, as grpc-js does. A retry or hedge runs from a
      // timer: a channel closed meanwhile ("Channel has been shut down") ends the call with
      // UNAVAILABLE, unless another attempt is still running, instead of throwing from the timer.
      if (index === 1) throw error;
      if (this.live.length === 0) {
        const details = error instanceof Error ? error.message : String(error);
        this.finish({ code: Status.UNAVAILABLE, details, metadata: new Metadata() });
      }
      return;
    }
    attempt.call = call;
    this.live.push(attempt);
    let metadata = this.metadata as Metadata;
    if (index > 1) {
      metadata = metadata.clone();
      metadata.set(PREVIOUS_ATTEMPTS_HEADER, String(index - 1));
    }
    call.start(metadata, attempt);
    if (index > 1) {
      // grpc-js's own order (a routing channel reads it): unary responses ask to read first.
      const readFirst = this.readPending && !this.responseStream;
      if (readFirst) call.startRead();
      if (this.hasMessage) call.sendMessage(this.message);
      if (this.halfClosed) call.halfClose();
      if (this.readPending && !readFirst) call.startRead();
    }
  }

  /** Ends the call with `a`'s status (and its held response, if nothing was delivered yet). */
  protected report(a: Attempt, status: StatusObject): void {
    const first = this.committed === undefined;
    this.commit(a);
    if (first) this.flush(a);
    this.finish(status);
  }

  private commit(a: Attempt): void {
    if (this.committed !== undefined) return;
    this.committed = a;
    this.ended();
    for (const other of this.live) {
      if (other !== a)
        other.call?.cancelWithStatus(
          Status.CANCELLED,
          'Breakwater: another attempt answered first',
        );
    }
  }

  private flush(a: Attempt): void {
    if (a.metadata !== undefined) this.listener?.onReceiveMetadata?.(a.metadata);
    a.metadata = undefined;
    if (a.hasMessage) this.listener?.onReceiveMessage?.(a.message);
    a.hasMessage = false;
    a.message = undefined;
  }

  private finish(status: StatusObject): void {
    if (this.finished) return;
    this.finished = true;
    this.ended();
    this.listener?.onReceiveStatus?.(status);
  }
}
