import type { Backoff, Clock, RetryBudget, Sleep } from '@breakwater/core';
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
  path: string;
  responseStream: boolean;
  /** Total attempts, the first included. */
  maxAttempts: number;
  /** Hedging: start another attempt when none answered within this many ms. */
  hedgeDelayMs: number | undefined;
  perAttemptTimeoutMs: number | undefined;
  backoff: Backoff;
  budget: RetryBudget | undefined;
  classify: GrpcStatusClassifier;
  clock: Clock;
  sleep: Sleep;
  onRetry: ((event: GrpcRetryEvent) => void) | undefined;
}

function deadlineMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/** Removes `a` from `live`, keeping the order, without `splice`'s per-call array. */
function removeAttempt(live: Attempt[], a: Attempt): void {
  const i = live.indexOf(a);
  if (i < 0) return;
  for (let j = i + 1; j < live.length; j++) live[j - 1] = live[j] as Attempt;
  live.length--;
}

/** One attempt: the listener grpc-js calls for it, and what it buffered before commit. */
class Attempt implements InterceptingListener {
  call: CallLink | undefined;
  metadata: Metadata | undefined;
  message: unknown;
  hasMessage = false;

  constructor(
    private readonly owner: MultiAttemptCall,
    readonly index: number,
    readonly perAttemptDeadline: boolean,
  ) {}
  onReceiveMetadata(metadata: Metadata): void {
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
 * in parallel). It buffers the request metadata and message so every attempt
 * re-sends them, holds each attempt's response until it commits to one (unary:
 * at its status; server streaming: at its first message), and owns its own
 * backoff, so `cancelWithStatus` during a wait ends the call at once.
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
  private waiting: AbortController | undefined;
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
    this.plan.budget?.recordRequest();
    this.launch();
    this.armHedge();
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
    this.stopWaiting();
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
    removeAttempt(this.live, a);
    if (this.finished || (this.committed !== undefined && this.committed !== a)) return;
    if (this.committed === a || status.code === Status.OK || this.cancelled) {
      this.report(a, status);
      return;
    }
    const verdict = this.plan.classify({
      path: this.plan.path,
      code: status.code,
      details: status.details,
      trailer: trailerGetter(status.metadata),
      perAttemptDeadline: a.perAttemptDeadline && this.plan.clock() < this.deadlineAt,
    });
    if (verdict.retry === false) {
      this.report(a, status);
      return;
    }
    // A hedge still running may yet answer; wait for it rather than report this failure.
    if (this.live.length > 0) return;
    const hedging = this.plan.hedgeDelayMs !== undefined;
    const retry = this.started;
    const delayMs = hedging
      ? (verdict.retryAfterMs ?? 0)
      : (verdict.retryAfterMs ?? this.plan.backoff.delayFor(retry, this.lastDelayMs));
    if (
      this.started >= this.plan.maxAttempts ||
      this.plan.clock() + delayMs >= this.deadlineAt ||
      (this.plan.budget !== undefined && !this.plan.budget.tryRetry())
    ) {
      this.report(a, status);
      return;
    }
    this.lastDelayMs = delayMs;
    this.plan.onRetry?.({ path: this.plan.path, attempt: retry + 1, delayMs, code: status.code });
    this.stopWaiting();
    if (delayMs <= 0) {
      this.launch();
      this.armHedge();
    } else {
      this.wait(delayMs, () => {
        this.launch();
        this.armHedge();
      });
    }
  }

  private launch(): void {
    const index = ++this.started;
    const { plan } = this;
    let options = this.options;
    let perAttempt = false;
    if (plan.perAttemptTimeoutMs !== undefined) {
      const at = plan.clock() + plan.perAttemptTimeoutMs;
      if (at < this.deadlineAt) {
        // Not a spread: see the deadline interceptor.
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
      if (this.hasMessage) call.sendMessage(this.message);
      if (this.halfClosed) call.halfClose();
      if (this.readPending) call.startRead();
    }
  }

  private armHedge(): void {
    const delay = this.plan.hedgeDelayMs;
    if (delay === undefined || this.started >= this.plan.maxAttempts || this.finished) return;
    this.wait(delay, () => {
      if (this.committed !== undefined || this.cancelled) return;
      if (this.plan.budget !== undefined && !this.plan.budget.tryRetry()) return;
      this.plan.onRetry?.({
        path: this.plan.path,
        attempt: this.started + 1,
        delayMs: delay,
        code: undefined,
      });
      this.launch();
      this.armHedge();
    });
  }

  private wait(ms: number, then: () => void): void {
    const controller = new AbortController();
    this.waiting = controller;
    void this.plan.sleep(ms, controller.signal).then(() => {
      if (this.waiting !== controller) return;
      this.waiting = undefined;
      if (!controller.signal.aborted && !this.finished) then();
    });
  }

  private stopWaiting(): void {
    const controller = this.waiting;
    this.waiting = undefined;
    controller?.abort();
  }

  private commit(a: Attempt): void {
    if (this.committed !== undefined) return;
    this.committed = a;
    this.stopWaiting();
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
    this.stopWaiting();
    this.listener?.onReceiveStatus?.(status);
  }
}
