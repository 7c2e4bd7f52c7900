import type { AttemptEngine } from '@breakwater/core';
import {
  type GrpcRetryEvent,
  type GrpcStatusClassifier,
  PREVIOUS_ATTEMPTS_HEADER,
} from '@breakwater/core/grpc';
import {
  type InterceptingListener,
  type InterceptorOptions,
  Metadata,
  type NextCall,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import type { StageChain } from './stage.js';
import type { AuthContextLike, CallLink } from './types.js';

/** How one method's attempts are run; built once per method and shared by its calls. @internal */
export interface AttemptPlan {
  readonly path: string;
  readonly responseStream: boolean;
  /** Decides every retry and hedge (a hedging engine has `hedgeDelayMs`). */
  readonly engine: AttemptEngine;
  /** The method is safe to repeat; otherwise only `neverSent` failures are retried. */
  readonly idempotent: boolean;
  /** Deadline of each attempt in ms; `Infinity` for none. */
  readonly attemptTimeoutMs: number;
  readonly classify: GrpcStatusClassifier;
  readonly onRetry: ((event: GrpcRetryEvent) => void) | undefined;
}

function deadlineMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/** One attempt: the listener grpc-js calls for it, and what it buffered before commit. */
class Attempt implements InterceptingListener {
  call: CallLink | undefined;
  metadata: Metadata | undefined;
  headersReceived = false;
  message: unknown;
  hasMessage = false;

  constructor(
    private readonly owner: MultiAttemptCall,
    readonly index: number,
    readonly perAttemptDeadline: boolean,
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
 * A client call made of one or more attempts (retries in sequence, or hedges
 * in parallel), every decision taken by the core attempt engine. It buffers
 * the request metadata and message so every attempt re-sends them, and holds
 * each attempt's response until it commits to one (unary: at its status;
 * server streaming: at its first message). Waits run on the engine's
 * schedule under the call's own signal, so `cancelWithStatus` during a wait
 * ends the call at once and leaves no timer.
 * @internal
 */
export class MultiAttemptCall implements CallLink {
  private listener: Partial<InterceptingListener> | undefined;
  private metadata: Metadata | undefined;
  private message: unknown;
  private hasMessage = false;
  private halfClosed = false;
  private readPending = false;
  private live: Attempt[] = [];
  private started = 0;
  private committed: Attempt | undefined;
  private finished = false;
  private cancelled = false;
  /** Aborts every pending wait; created by the first wait only. */
  private waits: AbortController | undefined;
  /** Bumped to drop a pending wait (a retry replaces the hedge timer). */
  private generation = 0;
  private lastDelayMs = 0;
  private readonly deadlineAt: number;

  constructor(
    private readonly plan: AttemptPlan,
    private readonly options: InterceptorOptions,
    private readonly chain: StageChain,
    private readonly index: number,
    private readonly final: NextCall,
  ) {
    this.deadlineAt = deadlineMs(options.deadline);
  }

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.metadata = metadata;
    this.listener = listener;
    this.plan.engine.budget?.recordRequest();
    this.launch();
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
    this.waits?.abort();
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
    if (this.plan.responseStream) {
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
    const { plan } = this;
    const verdict = plan.classify({
      path: plan.path,
      code: status.code,
      details: status.details,
      trailer: trailerGetter(status.metadata),
      perAttemptDeadline: a.perAttemptDeadline && plan.engine.clock() < this.deadlineAt,
      headersReceived: a.headersReceived,
    });
    // Only a request that never left may be repeated for a method not known to be safe.
    const delayMs =
      plan.idempotent || verdict.neverSent === true
        ? plan.engine.afterFailure(
            this.started,
            this.lastDelayMs,
            verdict,
            undefined,
            this.deadlineAt,
          )
        : -1;
    if (delayMs < 0) {
      // A hedge still running may yet answer, unless this failure says no attempt can help.
      if (this.live.length === 0 || verdict.retry === false) this.report(a, status);
      return;
    }
    this.lastDelayMs = delayMs;
    if (plan.onRetry !== undefined) {
      try {
        plan.onRetry({ path: plan.path, attempt: a.index, delayMs, code: status.code });
      } catch {
        // A listener never breaks a call, nor reaches grpc-js.
      }
    }
    this.wait(delayMs, () => this.launch());
  }

  private launch(): void {
    const index = ++this.started;
    const { plan } = this;
    let options = this.options;
    let perAttempt = false;
    if (plan.attemptTimeoutMs !== Number.POSITIVE_INFINITY) {
      const at = plan.engine.clock() + plan.attemptTimeoutMs;
      if (at < this.deadlineAt) {
        // Not a spread: see the deadline stage.
        options = Object.assign({}, options, { deadline: at });
        perAttempt = true;
      }
    }
    const attempt = new Attempt(this, index, perAttempt);
    const call = this.chain.next(options, this.index, this.final);
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
      const readFirst = this.readPending && !plan.responseStream;
      if (readFirst) call.startRead();
      if (this.hasMessage) call.sendMessage(this.message);
      if (this.halfClosed) call.halfClose();
      if (this.readPending && !readFirst) call.startRead();
    }
    const hedgeDelayMs = plan.engine.hedgeDelayMs;
    if (hedgeDelayMs !== undefined && index < plan.engine.attempts && plan.idempotent) {
      this.wait(hedgeDelayMs, () => {
        if (this.committed === undefined && !this.cancelled) {
          if (plan.engine.mayHedge(this.started, this.deadlineAt)) this.launch();
        }
      });
    }
  }

  /** Runs `then` after `ms` on the engine's schedule, unless the call ends or a newer wait replaces it. */
  private wait(ms: number, then: () => void): void {
    const generation = ++this.generation;
    this.waits ??= new AbortController();
    this.plan.engine.schedule(
      ms,
      () => {
        if (generation === this.generation && !this.finished) then();
      },
      this.waits.signal,
    );
  }

  private commit(a: Attempt): void {
    if (this.committed !== undefined) return;
    this.committed = a;
    this.generation++;
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

  private report(a: Attempt, status: StatusObject): void {
    const first = this.committed === undefined;
    this.commit(a);
    if (first) this.flush(a);
    this.finish(status);
  }

  private finish(status: StatusObject): void {
    if (this.finished) return;
    this.finished = true;
    this.waits?.abort();
    this.listener?.onReceiveStatus?.(status);
  }
}
