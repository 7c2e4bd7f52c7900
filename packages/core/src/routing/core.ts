import { STOP_NOT_RETRYABLE } from '../attempts/engine.js';
import {
  errorTypeOf,
  type SafeCallTelemetry,
  stopRefusal,
  type TelemetryRefusal,
} from '../attempts/telemetry.js';
import { isProbePermit } from '../breaker/machine.js';
import { timerWheelFor } from '../deadline/timer-wheel.js';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import {
  RoutingError,
  type RoutingSkipReason,
  type RoutingVisit,
} from '../errors/routing-error.js';
import { abortError } from '../internal/abort.js';
import { EventEmitter } from '../internal/events.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import { ROUTER_TARGET, type RouterConfig } from './options.js';
import { routeParallel } from './parallel.js';
import type {
  RouteExecuteOptions,
  RouteFailedEvent,
  RouteHedgedEvent,
  RouteOperation,
  RouteRecoveredEvent,
  RouteSelectedEvent,
  RouteSkippedEvent,
} from './types.js';
import {
  isPolicyError,
  type ProviderRuntime,
  runVisit,
  singleAttemptFailed,
  startAttempt,
  type VisitEnv,
  VisitFailure,
  visitDeadline,
  visitSucceeded,
} from './visit.js';

/**
 * One request's telemetry: visits are its attempts. Created only when the
 * router has the `telemetry` option.
 * @internal
 */
export class RouteTelemetry {
  /** Visits started. */
  visits = 0;
  constructor(
    readonly tel: SafeCallTelemetry,
    /** The router's telemetry clock. */
    readonly clock: Clock,
  ) {}

  /** A visit starts; returns its number. */
  visit(): number {
    this.tel.attemptStart(++this.visits, this.clock());
    return this.visits;
  }

  /** Visit `visit` succeeded. */
  succeeded(visit: number): void {
    this.tel.attemptEnd(visit, 'success', undefined, this.clock());
  }

  /** Visit `visit` failed with `failure`; `failover` is the engine's answer (or 1 when none was asked). */
  failed(visit: number, failure: VisitFailure, from: string, failover: number): void {
    const type = errorTypeOf(failure.error);
    this.tel.attemptEnd(visit, 'failure', type, this.clock());
    if (failover === 0) this.tel.failover(from, type);
    else {
      const refused = stopRefusal(failover);
      if (refused !== undefined) this.tel.refused(refused);
    }
  }

  /** Ends the request when `routed` settles. */
  watch(routed: Promise<unknown>, signal: AbortSignal): void {
    routed.then(
      () => this.tel.end('success', this.visits, undefined, this.clock()),
      (error: unknown) =>
        this.tel.end(
          signal.aborted ? 'cancelled' : 'failure',
          this.visits,
          errorTypeOf(error),
          this.clock(),
        ),
    );
  }
}

/** `admit()` result for a provider that has no circuit: admitted, nothing to release. */
const NO_PERMIT = -1;
/** `admit()` results below this are skips. */
const SKIP_CIRCUIT_OPEN = -2;
const SKIP_PROBE_BUSY = -3;

/** The router's shared state and event emitters, used by the sequential and parallel traversals. @internal */
export class RouterCore<R> implements VisitEnv {
  readonly selected = new EventEmitter<RouteSelectedEvent>();
  readonly skipped = new EventEmitter<RouteSkippedEvent>();
  readonly failed = new EventEmitter<RouteFailedEvent>();
  readonly hedged = new EventEmitter<RouteHedgedEvent>();
  readonly recovered = new EventEmitter<RouteRecoveredEvent>();
  readonly clock;
  readonly sleep;
  readonly wheel;
  readonly random;
  readonly budget;
  readonly health;

  constructor(readonly config: RouterConfig<R>) {
    this.clock = config.clock;
    this.sleep = config.sleep;
    this.wheel = timerWheelFor(config.sleep, config.clock);
    this.random = config.random;
    this.budget = config.budget;
    this.health = config.health;
  }

  /** Whether the last `admit()` claimed the health registry's single recovery probe. */
  claimedHealthProbe = false;

  /**
   * Admission before dispatch: the health registry (when consulted), then the
   * provider's circuit. Returns a circuit permit (>= 0), `NO_PERMIT`, or a
   * skip code. A circuit that refuses while half-open has its single recovery
   * probe out already, hence `'probe-busy'`. The registry lets all traffic
   * through once its cool-down is over, so the router itself holds back all
   * but one request there too (`claimedHealthProbe`; released by the caller).
   */
  admit(p: ProviderRuntime<R>): number {
    let healthProbe = false;
    if (this.config.consultHealth) {
      const state = this.health.circuitState(p.id);
      if (state === 'open') return SKIP_CIRCUIT_OPEN;
      if (state === 'half-open') {
        if (p.healthProbing) return SKIP_PROBE_BUSY;
        healthProbe = true;
      }
    }
    let permit = NO_PERMIT;
    const breaker = p.breaker;
    if (breaker !== undefined) {
      permit = breaker.tryAcquire();
      if (permit < 0) return breaker.state === 'half-open' ? SKIP_PROBE_BUSY : SKIP_CIRCUIT_OPEN;
    }
    if (healthProbe) p.healthProbing = true;
    this.claimedHealthProbe = healthProbe;
    return permit;
  }

  /** Panic credit: grows by `panic.ratio` per refused request in panic; a whole one buys a panic visit. */
  private panicCredit = 0;

  /**
   * A request found provider `p` ejected (skip `code`) and has not drawn for
   * the panic rule yet: whether it may visit an ejected provider anyway. Drawn
   * once per request, so a request that skips every provider counts once.
   */
  drawPanic(): boolean {
    const panic = this.config.panic;
    if (panic === undefined) return false;
    let ejected = 0;
    const { providers, consultHealth } = this.config;
    for (let i = 0; i < providers.length; i++) {
      const q = providers[i] as ProviderRuntime<R>;
      const state = q.breaker?.state;
      if (
        (state !== undefined && state !== 'closed') ||
        (consultHealth && this.health.isOpen(q.id))
      ) {
        ejected++;
      }
    }
    if (ejected < panic.ejected) return false;
    this.panicCredit += panic.ratio;
    if (this.panicCredit < 1 - 1e-9) return false;
    this.panicCredit -= 1;
    return true;
  }

  /**
   * The panic visit of a request that drew it: the ejected provider's circuit
   * half-opens at once and the request becomes its probe (one attempt; a
   * success closes the circuit; ejected by the health registry, it is the
   * registry's recovery call). Returns the permit (`NO_PERMIT` without a
   * circuit), or `code` when `p` cannot take it (isolated, or its probe is out).
   */
  panicAdmit(p: ProviderRuntime<R>, code: number): number {
    const breaker = p.breaker;
    let permit = NO_PERMIT;
    if (breaker !== undefined) {
      breaker.halfOpen();
      permit = breaker.tryAcquire();
      if (permit < 0) return code;
    }
    // Ejected by the consulted health registry: the visit is its recovery call, one at a time.
    const healthProbe = this.config.consultHealth && this.health.circuitState(p.id) !== 'closed';
    if (healthProbe && p.healthProbing) {
      if (permit >= 0) breaker?.release(permit, 'neutral');
      return code;
    }
    if (healthProbe) p.healthProbing = true;
    this.claimedHealthProbe = healthProbe;
    return permit;
  }

  /** Records a skip; returns the visit list (allocated on first use). */
  skip(p: ProviderRuntime<R>, code: number, visits: RoutingVisit[] | undefined): RoutingVisit[] {
    const reason: RoutingSkipReason = code === SKIP_PROBE_BUSY ? 'probe-busy' : 'circuit-open';
    if (this.skipped.active) this.skipped.emit({ providerId: p.id, reason });
    visits ??= [];
    visits.push({ providerId: p.id, status: 'skipped', reason });
    return visits;
  }

  /** Records a failed visit; returns the visit list (allocated on first use). */
  fail(p: ProviderRuntime<R>, f: VisitFailure, visits: RoutingVisit[] | undefined): RoutingVisit[] {
    if (this.failed.active) {
      const name = (f.error as { name?: unknown } | null)?.name;
      this.failed.emit({
        providerId: p.id,
        errorName: typeof name === 'string' ? name : undefined,
        counted: f.counted,
        durationMs: f.durationMs,
      });
    }
    visits ??= [];
    visits.push({ providerId: p.id, status: 'failed', cause: f.error });
    return visits;
  }

  /** A visit succeeded: move a sticky choice, announce a recovery. */
  won(p: ProviderRuntime<R>, generation: number, probe: boolean): void {
    this.config.selection.succeeded(p.index, generation);
    if (probe && this.recovered.active) this.recovered.emit({ providerId: p.id });
  }

  /** True when the visit just admitted is a recovery probe (circuit or health registry half-open). */
  isProbe(permit: number): boolean {
    return this.claimedHealthProbe || isProbePermit(permit);
  }

  /** Tries providers one after another (no hedging): the hot path. */
  async routeSequential<T>(
    fn: RouteOperation<R, T>,
    signal: AbortSignal,
    policy: ErrorPolicy | undefined,
    deadlineAt: number,
    rt: RouteTelemetry | undefined,
  ): Promise<T> {
    const { selection, providers } = this.config;
    const generation = selection.generation;
    const order = selection.order();
    let visits: RoutingVisit[] | undefined;
    // The panic rule is drawn at the first skip of the request: 0 not yet, 1 won, -1 lost or used.
    let panic = 0;
    for (let k = 0; k < order.length; k++) {
      if (signal.aborted) throw abortError(signal);
      const p = providers[order[k] as number] as ProviderRuntime<R>;
      let permit = this.admit(p);
      if (permit < NO_PERMIT) {
        if (panic === 0) panic = this.drawPanic() ? 1 : -1;
        if (panic === 1) permit = this.panicAdmit(p, permit);
        if (permit < NO_PERMIT) {
          visits = this.skip(p, permit, visits);
          rt?.tel.refused('circuit-open');
          continue;
        }
        panic = -1;
      }
      const visit = rt === undefined ? 0 : rt.visit();
      const healthProbe = this.claimedHealthProbe;
      const probe = this.isProbe(permit);
      if (this.selected.active)
        this.selected.emit({ providerId: p.id, visit: k + 1, hedge: false });
      try {
        // The first attempt runs inline rather than in runVisit's async frame (hot path);
        // only a failure that may be retried goes on in runVisit.
        const start = this.clock();
        let value: T;
        p.inflight++;
        try {
          value = await startAttempt(p, fn, signal, 1, this, visitDeadline(p, start));
        } catch (error) {
          p.inflight--;
          // A recovery probe is never retried: its failure re-opens the circuit at once.
          if (p.config.engine === undefined || probe) {
            throw singleAttemptFailed(p, permit, error, signal, policy, this.clock() - start, this);
          }
          value = await runVisit(p, permit, false, fn, signal, policy, this, deadlineAt, {
            error,
            startedAt: start,
          });
          rt?.succeeded(visit);
          this.won(p, generation, probe);
          return value;
        }
        p.inflight--;
        visitSucceeded(p, permit, this.clock() - start, this);
        rt?.succeeded(visit);
        this.won(p, generation, probe);
        return value;
      } catch (error) {
        if (!(error instanceof VisitFailure)) throw error;
        visits = this.fail(p, error, visits);
        if (k + 1 < order.length) {
          const go = this.config.engine.mayFailOver(error.verdict, deadlineAt);
          rt?.failed(visit, error, p.id, go);
          if (go === STOP_NOT_RETRYABLE) throw error.error;
          // The budget refused the failover: the request ends as if no provider were left.
          if (go < 0) break;
        } else {
          rt?.failed(visit, error, p.id, 1);
          if (error.verdict.failover === false) throw error.error;
        }
      } finally {
        if (healthProbe) p.healthProbing = false;
      }
    }
    throw new RoutingError(visits ?? []);
  }

  /** A request refused before its traversal (no visit): telemetry hears one refused call. */
  refuse(reason: TelemetryRefusal): void {
    const telemetry = this.config.telemetry;
    if (telemetry === undefined) return;
    const now = telemetry.clock();
    const tel = telemetry.startCall(ROUTER_TARGET, now);
    if (tel === undefined) return;
    tel.refused(reason);
    tel.end('refused', 0, undefined, now);
  }

  /** One request's traversal, after admission to a slot. */
  route<T>(
    fn: RouteOperation<R, T>,
    signal: AbortSignal,
    policy: ErrorPolicy | undefined,
    fallback: RouteExecuteOptions<T>['fallback'],
    deadlineAt: number,
  ): Promise<T> {
    // A request whose deadline passed before it was admitted never visits a provider: no time is left.
    if (deadlineAt !== Number.POSITIVE_INFINITY && this.clock() >= deadlineAt) {
      this.refuse('deadline-expired');
      const expired = Promise.reject(new DeadlineExceededError());
      if (fallback === undefined) return expired;
      return expired.catch((error: unknown) => fallback(error, { signal }));
    }
    this.budget?.recordRequest();
    const { hedge, selection, telemetry } = this.config;
    let rt: RouteTelemetry | undefined;
    if (telemetry !== undefined) {
      const tel = telemetry.startCall(ROUTER_TARGET, telemetry.clock());
      if (tel !== undefined) rt = new RouteTelemetry(tel, telemetry.clock);
    }
    const routed =
      hedge === undefined && selection.type !== 'race'
        ? this.routeSequential(fn, signal, policy, deadlineAt, rt)
        : routeParallel(this, fn, signal, policy, deadlineAt, rt);
    rt?.watch(routed, signal);
    if (fallback === undefined) return routed;
    return routed.catch((error: unknown) => {
      // Fallback covers routing failures, not cancellation or a throwing policy.
      if (signal.aborted || isPolicyError(error)) throw error;
      return fallback(error, { signal });
    });
  }
}
