import {
  type ErrorVerdict,
  isConcurrencyLimitError,
  isDeadlineExceededError,
  isQueueFullError,
  isRoutingError,
  PROPAGATION_HEADERS,
} from '@breakwater/core';
import { PREVIOUS_ATTEMPTS_HEADER } from '@breakwater/core/grpc';
import {
  type Inheritance,
  inheritInbound,
  onInboundCancel,
  timeoutHeaderMs,
} from '@breakwater/core/internal';
import { systemClock } from '@breakwater/core/time';
import {
  type CallCredentials,
  type ChannelInterface,
  type Deadline,
  type InterceptingListener,
  Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import { type AttemptOwner, RouteAttempt } from './route-attempt.js';
import {
  LOST,
  type RoutingStack,
  type RoutingState,
  type RoutingTargetRuntime,
  STOP_COUNTED,
  STOP_NEUTRAL,
} from './routing-state.js';
import { statusWithCause } from './status.js';
import { TargetAttemptError } from './target-attempt-error.js';
import type { AuthContextLike } from './types.js';

/** grpc-js's channel-level call (not exported by name). */
type Call = ReturnType<ChannelInterface['createCall']>;
type ServerSurfaceCall = Parameters<ChannelInterface['createCall']>[3];
type MessageContext = Parameters<Call['sendMessageWithContext']>[0];

const EMPTY_CONTEXT: MessageContext = Object.freeze({});
const LOST_DETAILS = 'Breakwater: another target answered first';
/** grpc-js's words for a call made on a closed channel. */
const CLOSED_DETAILS = 'Channel has been shut down';
/** Rejection of an attempt the router starts after the call already ended. */
const ABANDONED = new TargetAttemptError(
  { code: Status.CANCELLED, details: 'Breakwater: call already ended', metadata: new Metadata() },
  '',
  STOP_NEUTRAL,
);

// Calls started in this tick whose request shape is not known yet (see RoutedCall.start).
let undecided: RoutedCall[] = [];
function decideUndecided(): void {
  const calls = undecided;
  undecided = [];
  // Still no halfClose: a request stream that waits for its own writes. Pin it to one target.
  for (const call of calls) call.dispatch(false);
}

function deadlineMs(deadline: Deadline): number {
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * A call of the routing channel. It opens no stream until it knows the shape
 * of its request: at `halfClose` with at most one message (unary and
 * server-streaming calls do this in the tick they start) the request is
 * complete and replayable: each attempt on a target channel is re-sent from
 * the buffered message. An idempotent method's call goes through the `safe`
 * router (failover, retries, hedges); any other method's through the
 * `pinned` one, retried or failed over only when its request never left
 * (verdict `neverSent`: no connection, stream refused). A request still
 * streaming at the end of its first tick goes through the `pinned` router:
 * one target, straight through. A replayable call commits to the first attempt that ends OK (a
 * unary response: its message is held until then, so a target that dies
 * after the message but before the status fails over) or, for a response
 * stream, that delivers its first message; before that, headers are held.
 * @internal
 */
export class RoutedCall implements Call, AttemptOwner {
  private listener: InterceptingListener | undefined;
  private metadata: Metadata | undefined;
  private messages = 0;
  private message: Buffer | undefined;
  private context: MessageContext = EMPTY_CONTEXT;
  /** Pinned calls: writes made before the router picked a target. */
  private queued: Array<MessageContext | Buffer> | undefined;
  private halfClosed = false;
  private readPending = false;
  /**
   * The caller asked to read before it sent anything: grpc-js's unary-response
   * calls do (a response stream asks later, from its readable), so the one
   * response message is held until the OK status and the call commits there.
   */
  private unaryResponse = false;
  private dispatched = false;
  private replayable = false;
  /** Replayable and of a method safe to repeat: every failure the classifier allows may repeat it. */
  private idempotent = false;
  private live: RouteAttempt[] = [];
  private committed: RouteAttempt | undefined;
  private finished = false;
  private endStatus: StatusObject | undefined;
  private cancelled = false;
  private attempts = 0;
  private credentials: CallCredentials | undefined;
  private readonly deadlineAt: number;
  private readonly deadline: Deadline;
  /** The client's routers and settings, or those of the method's `methods` entry. */
  private readonly stack: RoutingStack;
  private readonly callNumber: number;
  /** What the call inherits from the inbound call it runs under; `undefined` outside a bound handler. */
  private readonly inherited: Inheritance | undefined;
  /** Stops waiting for the inbound call's cancellation. */
  private stopWaiting: (() => void) | undefined;
  /** The inbound call has heard how this call ended. */
  private told = false;

  constructor(
    private readonly state: RoutingState,
    private readonly path: string,
    deadline: Deadline,
    private readonly host: string | null | undefined,
    private readonly parentCall: ServerSurfaceCall | null,
    private readonly propagateFlags: number | null | undefined,
  ) {
    this.stack = state.stackFor(path);
    this.inherited = inheritInbound(state.propagate);
    const own = deadlineMs(deadline);
    // Inside a bound handler the inbound deadline, less the margin, bounds every attempt;
    // a method entry's `timeoutMs` bounds the call when earlier than the caller's deadline.
    const bound = Math.min(
      this.inherited?.deadline ?? Number.POSITIVE_INFINITY,
      this.stack.timeoutMs === undefined
        ? Number.POSITIVE_INFINITY
        : state.clock() + this.stack.timeoutMs,
    );
    this.deadlineAt = Math.min(own, bound);
    this.deadline = bound < own ? bound : deadline;
    this.callNumber = state.nextCallNumber();
  }

  start(metadata: Metadata, listener: InterceptingListener): void {
    this.metadata = metadata;
    this.listener = listener;
    const inbound = this.inherited?.inbound;
    if (inbound !== undefined && !this.finished) {
      if (inbound.criticality !== undefined) {
        metadata.set(PROPAGATION_HEADERS.grpc.criticality, inbound.criticality);
      }
      this.stopWaiting = onInboundCancel(inbound, () =>
        this.cancelWithStatus(Status.CANCELLED, 'Cancelled: the inbound call was cancelled'),
      );
    }
    if (this.finished) {
      // Cancelled before it started: report once the caller's start returned.
      const status = this.endStatus as StatusObject;
      process.nextTick(() => listener.onReceiveStatus(status));
      return;
    }
    if (undecided.length === 0) queueMicrotask(decideUndecided);
    undecided.push(this);
  }

  sendMessageWithContext(context: MessageContext, message: Buffer): void {
    if (this.finished) {
      context.callback?.();
      return;
    }
    this.messages++;
    if (!this.dispatched) {
      if (this.messages === 1) {
        this.message = message;
        this.context = context;
        return;
      }
      // A second message before halfClose: a request stream, never replayed.
      this.dispatch(false);
    }
    if (this.replayable) return;
    const a = this.committed;
    if (a !== undefined) {
      a.call.sendMessageWithContext(context, message);
      return;
    }
    // The router has not picked a target yet (a queue or backoff): keep the order.
    this.queued ??= [];
    this.queued.push(context, message);
  }

  halfClose(): void {
    if (this.halfClosed || this.finished) return;
    this.halfClosed = true;
    if (!this.dispatched) {
      this.dispatch(this.messages <= 1);
      return;
    }
    for (const a of this.live) a.call.halfClose();
  }

  startRead(): void {
    if (this.messages === 0 && !this.halfClosed) this.unaryResponse = true;
    const c = this.committed;
    if (c !== undefined && !this.live.includes(c)) return;
    if (c !== undefined) {
      c.call.startRead();
      return;
    }
    this.readPending = true;
    for (const a of this.live) a.call.startRead();
  }

  cancelWithStatus(code: Status, details: string): void {
    if (this.finished) return;
    this.cancelled = true;
    const c = this.committed;
    if (c !== undefined && this.live.includes(c)) {
      // Committed: the target call reports its own CANCELLED status.
      c.call.cancelWithStatus(code, details);
      return;
    }
    this.dispatched = true;
    this.finish({ code, details, metadata: new Metadata() });
    for (const a of this.live.slice()) a.call.cancelWithStatus(code, details);
  }

  getPeer(): string {
    return (this.committed ?? this.live[this.live.length - 1])?.call.getPeer() ?? 'unknown';
  }
  getCallNumber(): number {
    return this.callNumber;
  }
  setCredentials(credentials: CallCredentials): void {
    this.credentials = credentials;
    for (const a of this.live) a.call.setCredentials(credentials);
  }
  getAuthContext(): AuthContextLike {
    return this.committed?.call.getAuthContext() ?? null;
  }

  /** Hands the call to a router once its request shape is known (`replayable`: complete, buffered). */
  dispatch(replayable: boolean): void {
    if (this.dispatched) return;
    this.dispatched = true;
    this.replayable = replayable;
    this.idempotent = replayable && this.stack.isSafe(this.path);
    const router = this.idempotent ? this.stack.safe : this.stack.pinned;
    // The grpc-js deadline bounds every attempt on its own; the router only needs it to skip
    // a retry or failover that could not start in time (the engine's rule), and cuts a hung
    // attempt by it. A request stream is never repeated, and its first answer waits on its
    // own writes: it gets none, so nothing cuts it short.
    const deadlineAt = replayable ? this.deadlineAt : Number.POSITIVE_INFINITY;
    router
      .execute((target, context) => this.attempt(target, context.signal), {
        classify: (error) => this.judge(error),
        idempotent: this.idempotent,
        method: this.path,
        ...(deadlineAt === Number.POSITIVE_INFINITY ? {} : { deadlineAt }),
      })
      .then(undefined, (error: unknown) => this.routeFailed(error));
  }

  /**
   * The router's verdict on a failed attempt: an attempt carries its own; the
   * router's cut of a hung attempt (its derived attempt timeout, a
   * `DeadlineExceededError`) is judged as that attempt's per-attempt deadline
   * (counted; failed over only for a call safe to repeat: a cut request may
   * have run); anything else (e.g. `createCall` threw) ends the request
   * without blaming the target.
   */
  private judge(error: unknown): ErrorVerdict {
    if (error instanceof TargetAttemptError) return error.verdict;
    if (!isDeadlineExceededError(error)) return STOP_NEUTRAL;
    const cut = {
      code: Status.DEADLINE_EXCEEDED,
      details: error.message,
      metadata: new Metadata(),
    };
    return this.verdictOn(cut, this.state.clock() < this.deadlineAt, true);
  }

  /** The router's operation: one attempt of this call on `target`. */
  private attempt(target: RoutingTargetRuntime, signal: AbortSignal): Promise<void> {
    if (this.finished || signal.aborted) return Promise.reject(ABANDONED);
    if (this.state.closed) {
      // Closed during a retry's backoff: the call ends as a closed grpc-js channel ends it.
      const closed = {
        code: Status.UNAVAILABLE,
        details: CLOSED_DETAILS,
        metadata: new Metadata(),
      };
      return Promise.reject(new TargetAttemptError(closed, target.id, STOP_NEUTRAL));
    }
    const { state } = this;
    let deadline: Deadline = this.deadline;
    let perAttempt = false;
    const { perAttemptTimeoutMs } = this.stack;
    if (perAttemptTimeoutMs !== undefined) {
      const at = state.clock() + perAttemptTimeoutMs;
      if (at < this.deadlineAt) {
        deadline = at;
        perAttempt = true;
      }
    }
    const a = new RouteAttempt(this, target, perAttempt);
    const call = target.channel.createCall(
      this.path,
      deadline,
      this.host,
      this.parentCall,
      this.propagateFlags,
    );
    a.call = call;
    if (this.credentials !== undefined) call.setCredentials(this.credentials);
    this.live.push(a);
    const index = ++this.attempts;
    // A pinned call has one attempt and nothing to choose: everything passes straight through.
    if (!this.replayable) this.committed = a;
    let metadata = this.metadata as Metadata;
    const stamped = deadline !== Number.POSITIVE_INFINITY;
    if (index > 1 || stamped) metadata = metadata.clone();
    if (index > 1) metadata.set(PREVIOUS_ATTEMPTS_HEADER, String(index - 1));
    if (stamped) {
      // grpc-js hides `grpc-timeout` from server handlers; this header tells a bound server the time left.
      metadata.set(
        PROPAGATION_HEADERS.http.timeout,
        timeoutHeaderMs(deadlineMs(deadline) - systemClock()),
      );
    }
    call.start(metadata, a);
    if (this.message !== undefined) {
      call.sendMessageWithContext(index === 1 ? this.context : EMPTY_CONTEXT, this.message);
    }
    if (!this.replayable) {
      this.message = undefined;
      const q = this.queued;
      this.queued = undefined;
      if (q !== undefined) {
        for (let i = 0; i < q.length; i += 2) {
          call.sendMessageWithContext(q[i] as MessageContext, q[i + 1] as Buffer);
        }
      }
    }
    if (this.halfClosed) call.halfClose();
    if (this.readPending) call.startRead();
    // The router abandons an attempt through its signal (a hedge or race loser, an attempt it cut
    // as hung): the target's call ends with it, so nothing keeps waiting on that target.
    const onAbort = () => {
      a.lost = true;
      const reason: unknown = signal.reason;
      if (isDeadlineExceededError(reason)) {
        call.cancelWithStatus(Status.DEADLINE_EXCEEDED, reason.message);
      } else call.cancelWithStatus(Status.CANCELLED, LOST_DETAILS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    a.unwatch = () => signal.removeEventListener('abort', onAbort);
    return a.promise;
  }

  attemptMetadata(a: RouteAttempt, metadata: Metadata): void {
    if (this.finished) return;
    if (this.committed === a) this.listener?.onReceiveMetadata(metadata);
    else if (this.committed === undefined) a.heldMetadata = metadata;
  }

  attemptMessage(a: RouteAttempt, message: Buffer): void {
    if (this.finished) return;
    if (this.committed === undefined && this.unaryResponse) {
      // Not delivered yet: a target that dies before its status must not have answered.
      a.heldMessage = message;
      return;
    }
    if (this.committed === undefined) this.commit(a);
    if (this.committed !== a) return;
    this.readPending = false;
    this.listener?.onReceiveMessage(message);
    a.succeed();
  }

  attemptStatus(a: RouteAttempt, status: StatusObject): void {
    const i = this.live.indexOf(a);
    if (i >= 0) this.live.splice(i, 1);
    if (this.committed === undefined && status.code === Status.OK && !this.finished) {
      this.commit(a);
    }
    if (this.committed !== a) {
      // An uncommitted failure: the router retries, fails over, or gives up (routeFailed).
      a.fail(status);
      return;
    }
    if (status.code === Status.OK) a.succeed();
    else if (!a.settled) a.fail(status);
    else if (this.verdictFor(a, status).countForCircuit !== false) {
      // Failed after it committed (a stream broke): the router already counted a success.
      this.state.targetFailed(this.stack, a.target.id);
    }
    this.finish(status);
  }

  attemptFailure(a: RouteAttempt, status: StatusObject): TargetAttemptError {
    return new TargetAttemptError(status, a.target.id, this.verdictFor(a, status));
  }

  private verdictFor(a: RouteAttempt, status: StatusObject): ErrorVerdict {
    if (a.lost) return LOST;
    const perAttemptDeadline = a.perAttempt && this.state.clock() < this.deadlineAt;
    return this.verdictOn(status, perAttemptDeadline, a.headersReceived);
  }

  /** The classifier's verdict on an attempt's status, stopped where no other attempt may, or could, help. */
  private verdictOn(
    status: StatusObject,
    perAttemptDeadline: boolean,
    headersReceived: boolean,
  ): ErrorVerdict {
    const verdict = this.state.classify({
      path: this.path,
      code: status.code,
      details: status.details,
      trailer: trailerGetter(status.metadata),
      perAttemptDeadline,
      cancelledByCaller: this.cancelled,
      headersReceived,
    });
    // Not replayable, a method not safe to repeat whose request may have left, or the call's
    // own deadline is gone: no other attempt may, or could, help.
    const stop =
      !this.replayable ||
      this.finished ||
      (!this.idempotent && verdict.neverSent !== true) ||
      (status.code === Status.DEADLINE_EXCEEDED && !perAttemptDeadline);
    if (!stop) return verdict;
    return verdict.countForCircuit === false ? STOP_NEUTRAL : STOP_COUNTED;
  }

  private commit(a: RouteAttempt): void {
    this.committed = a;
    for (const other of this.live) {
      if (other === a) continue;
      other.lost = true;
      other.call.cancelWithStatus(Status.CANCELLED, LOST_DETAILS);
    }
    if (a.heldMetadata !== undefined) {
      this.listener?.onReceiveMetadata(a.heldMetadata);
      a.heldMetadata = undefined;
    }
    const held = a.heldMessage;
    if (held !== undefined) {
      a.heldMessage = undefined;
      this.readPending = false;
      this.listener?.onReceiveMessage(held);
    }
  }

  /** The router gave up: report the status that explains why. */
  private routeFailed(error: unknown): void {
    if (this.finished) return;
    this.tell(error);
    if (error instanceof TargetAttemptError) {
      this.finish(error.status);
    } else if (isRoutingError(error)) {
      const last = error.cause;
      if (last instanceof TargetAttemptError) {
        this.finish({ ...last.status, cause: error } as StatusObject);
      } else if (isDeadlineExceededError(last)) {
        // The last target's attempt was cut as hung.
        this.finish(statusWithCause(Status.DEADLINE_EXCEEDED, last.message, error));
      } else {
        const skipped = error.visits.map(
          (v) => `${v.providerId} (${v.status === 'skipped' ? v.reason : v.status})`,
        );
        this.finish(
          statusWithCause(
            Status.UNAVAILABLE,
            `Breakwater: no target available: ${skipped.join(', ')}`,
            error,
          ),
        );
      }
    } else if (isQueueFullError(error) || isConcurrencyLimitError(error)) {
      // Refused before any target was sent the call: every target's adaptive limit was full.
      this.finish(statusWithCause(Status.RESOURCE_EXHAUSTED, error.message, error));
    } else if (isDeadlineExceededError(error)) {
      // The router cut a hung attempt of a call it may not repeat, or refused a call whose
      // deadline had passed before it could visit a target.
      this.finish(statusWithCause(Status.DEADLINE_EXCEEDED, error.message, error));
    } else {
      const message = error instanceof Error ? error.message : String(error);
      this.finish(statusWithCause(Status.INTERNAL, `Breakwater routing: ${message}`, error));
    }
  }

  /** Tells the inbound call how this call ended (`error`: how the router gave up); once. */
  private tell(error?: unknown): void {
    const inherited = this.inherited;
    if (inherited === undefined || this.told || this.cancelled) return;
    this.told = true;
    if (error === undefined) inherited.succeeded();
    else {
      const last = isRoutingError(error) ? error.cause : error;
      inherited.failed(error, last instanceof TargetAttemptError ? last.verdict : undefined);
    }
  }

  private finish(status: StatusObject): void {
    if (this.finished) return;
    this.stopWaiting?.();
    if (status.code === Status.OK) this.tell();
    else this.tell(status);
    this.finished = true;
    this.endStatus = status;
    this.message = undefined;
    this.queued = undefined;
    this.listener?.onReceiveStatus(status);
  }
}
