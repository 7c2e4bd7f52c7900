import {
  type GrpcRetryEvent,
  GrpcStatus,
  type GrpcStatusClassifier,
  grpcStatusName as statusName,
} from '@breakwater/core/grpc';
import {
  type AttemptEngine,
  type AttemptTimeout,
  claimTelemetry,
  stopRefusal,
  type TelemetryScope,
} from '@breakwater/core/internal';
import type {
  InterceptingListener,
  InterceptorOptions,
  Metadata,
  NextCall,
  StatusObject,
} from '@grpc/grpc-js';
import { trailerGetter } from '../trailer-getter.js';
import { type Attempt, ReplayingCall } from './replaying-call.js';
import type { StageChain } from './stage.js';

/** How one method's attempts are run; built once per method and shared by its calls. @internal */
export interface AttemptPlan {
  readonly path: string;
  readonly responseStream: boolean;
  /** Decides every retry and hedge (a hedging engine has `hedgeDelayMs`). */
  readonly engine: AttemptEngine;
  /** The method is safe to repeat; otherwise only `neverSent` failures are retried. */
  readonly idempotent: boolean;
  /** Deadline of each attempt (derived per attempt unless `attemptTimeoutMs` was given). */
  readonly attemptTimeout: AttemptTimeout;
  readonly classify: GrpcStatusClassifier;
  readonly onRetry: ((event: GrpcRetryEvent) => void) | undefined;
}

function deadlineMs(deadline: InterceptorOptions['deadline']): number {
  if (deadline === undefined) return Number.POSITIVE_INFINITY;
  return deadline instanceof Date ? deadline.getTime() : deadline;
}

/**
 * Retries (in sequence) or hedges (in parallel) a grpc-js call, every
 * decision taken by the core attempt engine: after a failed attempt
 * `afterFailure` (verdict, pushback, attempts, deadline, budget), on the
 * hedge timer `mayHedge`, and every wait on its `schedule` under the call's
 * own signal, so a cancel during a wait ends the call at once and leaves no
 * timer. Buffering, replay and the commit point are {@link ReplayingCall}'s.
 * @internal
 */
export class MultiAttemptCall extends ReplayingCall {
  /** Aborts every pending wait; created by the first wait only. */
  private waits: AbortController | undefined;
  /** Bumped to drop a pending wait (a retry replaces the hedge timer). */
  private generation = 0;
  private lastDelayMs = 0;
  private readonly deadlineAt: number;
  /** The call's telemetry (the interceptor's `telemetry` option), else `undefined`. */
  private readonly scope: TelemetryScope | undefined;
  /** Bit `i` set: attempt `i` was a hedge (sent while earlier attempts still ran). */
  private hedges = 0;

  constructor(
    private readonly plan: AttemptPlan,
    options: InterceptorOptions,
    chain: StageChain,
    index: number,
    final: NextCall,
  ) {
    super(plan.responseStream, options, chain, index, final);
    this.deadlineAt = deadlineMs(options.deadline);
    this.scope = claimTelemetry(options);
  }

  override onStatus(a: Attempt, status: StatusObject): void {
    if (status.code === GrpcStatus.OK && !this.finished) {
      const now = this.plan.engine.clock();
      this.plan.attemptTimeout.observe(this.plan.path, now - a.startedAt, now);
    }
    const scope = this.scope;
    // Only the attempts that decide something: not one cancelled because another answered.
    if (scope !== undefined && !this.finished && (this.committed ?? a) === a) {
      const tel = scope.tel;
      const ok = status.code === GrpcStatus.OK;
      const timedOut = status.code === GrpcStatus.DEADLINE_EXCEEDED && a.perAttemptDeadline;
      if (timedOut) tel.deadlineExceeded('attempt');
      tel.attemptEnd(
        a.index,
        ok ? 'success' : timedOut ? 'timeout' : 'failure',
        ok ? undefined : statusName(status.code),
        scope.clock(),
      );
      if (ok && (this.hedges & (1 << a.index)) !== 0) tel.hedgeWon(a.index);
    }
    super.onStatus(a, status);
  }

  override start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    super.start(metadata, listener);
    this.plan.engine.budget?.recordRequest();
    this.launch();
  }

  protected attemptFailed(a: Attempt, status: StatusObject): void {
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
      const refused = this.scope === undefined ? undefined : stopRefusal(delayMs);
      if (refused !== undefined) this.scope?.tel.refused(refused);
      // A hedge still running may yet answer, unless this failure says no attempt can help.
      if (this.live.length === 0 || verdict.retry === false) this.report(a, status);
      return;
    }
    this.lastDelayMs = delayMs;
    this.scope?.tel.retry(a.index, delayMs, statusName(status.code));
    if (plan.onRetry !== undefined) {
      try {
        plan.onRetry({ path: plan.path, attempt: a.index, delayMs, code: status.code });
      } catch {
        // A listener never breaks a call, nor reaches grpc-js.
      }
    }
    this.wait(delayMs, () => this.launch());
  }

  protected ended(): void {
    this.generation++;
    this.waits?.abort();
    this.waits = undefined;
  }

  private launch(asHedge = false): void {
    const { plan } = this;
    let options = this.options;
    let perAttempt = false;
    const now = plan.engine.clock();
    // A timed-out attempt is repeated only for a method safe to repeat, within the attempts.
    const retryMayFollow = plan.idempotent && this.started + 1 < plan.engine.attempts;
    const ms = plan.attemptTimeout.forAttempt(
      plan.path,
      this.deadlineAt - now,
      retryMayFollow,
      now,
    );
    if (ms !== Number.POSITIVE_INFINITY) {
      const at = now + ms;
      if (at < this.deadlineAt) {
        // Not a spread: see the deadline stage.
        options = Object.assign({}, options, { deadline: at });
        perAttempt = true;
      }
    }
    const scope = this.scope;
    if (scope !== undefined) {
      const n = this.started + 1;
      scope.attempts = n;
      scope.tel.attemptStart(n, scope.clock());
      if (asHedge) {
        this.hedges |= 1 << n;
        scope.tel.hedge(n);
      }
    }
    this.startAttempt(options, perAttempt, now);
    const hedgeDelayMs = plan.engine.hedgeDelayMs;
    if (hedgeDelayMs !== undefined && this.started < plan.engine.attempts) {
      this.wait(hedgeDelayMs, () => {
        if (plan.engine.mayHedge(this.started, this.deadlineAt)) this.launch(true);
        // Within the attempts and before the deadline: the budget refused it.
        else if (plan.engine.clock() < this.deadlineAt) this.scope?.tel.refused('budget-exhausted');
      });
    }
  }

  /** Runs `then` after `ms` on the engine's schedule, unless the call commits, ends, or a newer wait replaces it. */
  private wait(ms: number, then: () => void): void {
    const generation = ++this.generation;
    this.waits ??= new AbortController();
    this.plan.engine.schedule(
      ms,
      () => {
        if (generation === this.generation && this.committed === undefined && !this.finished) {
          then();
        }
      },
      this.waits.signal,
    );
  }
}
