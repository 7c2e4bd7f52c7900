import { STOP_NOT_RETRYABLE } from '../attempts/engine.js';
import {
  errorTypeOf,
  type SafeCallTelemetry,
  stopRefusal,
  type TelemetryRefusal,
  type TelemetryTarget,
} from '../attempts/telemetry.js';
import { isProbePermit } from '../breaker/machine.js';
import type { CircuitBreaker } from '../breaker/types.js';
import { timerWheelFor } from '../deadline/timer-wheel.js';
import type { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import { DeadlineExceededError } from '../errors/deadline-exceeded-error.js';
import {
  RoutingError,
  type RoutingSkipReason,
  type RoutingVisit,
} from '../errors/routing-error.js';
import { abortError } from '../internal/abort.js';
import { EventEmitter } from '../internal/events.js';
import type { LimitOutcome, LimitPermit } from '../limit/adaptive-limiter.js';
import type { Criticality } from '../limit/criticality.js';
import { ok, type Result } from '../result/result.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { Clock } from '../time/clock.js';
import { ROUTER_TARGET, type RouterConfig } from './options.js';
import { type OutageGate, outageGateFor } from './outage-gate.js';
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
  type RequestBounds,
  runVisit,
  singleAttemptFailed,
  startAttempt,
  type VisitEnv,
  VisitFailure,
  visitDeadline,
  visitLimitOutcome,
  visitSucceeded,
} from './visit.js';

/** `takeSlot()` for a provider without an adaptive limit: admitted, nothing to release. */
const NO_SLOT = ok(undefined);

/**
 * One request's telemetry: visits are its attempts. Created only when the
 * router has the `telemetry` option.
 * @internal
 */
export class RouteTelemetry {
  /** Visits started. */
  visits = 0;
  /**
   * A telemetry clock reading the next event shares (`undefined` for none):
   * the request's start, taken by a visit that starts with it (before
   * {@link RouteTelemetry.watch}); then a successful visit's end, taken by
   * the request's end. So a routed success reads the clock twice, not four
   * times. `undefined`, not NaN, for none: the field keeps the clock's own
   * number, and handing it on boxes nothing.
   */
  private at: number | undefined;
  /**
   * Visit 1's success reading while it is the request's only visit: that
   * success ends the request, told with the request's end in one hook
   * (`firstAttemptSucceeded`). `undefined` otherwise.
   */
  private firstWonAt: number | undefined = undefined;
  constructor(
    readonly tel: SafeCallTelemetry,
    /** The router's telemetry clock. */
    readonly clock: Clock,
    /** The reading the request's start was told with. */
    startedAt: number,
    /** The telemetry's `firstAttemptAtStart`: visit 1 on the request's start reading is not told. */
    private readonly firstAtStart: boolean,
  ) {
    this.at = startedAt;
  }

  /** A failover told once the provider it goes to is picked: `[from, reason]`. */
  private leaving: readonly [string, string] | undefined = undefined;

  /** A visit of provider `provider` starts; returns its number. */
  visit(provider: string): number {
    this.tellFailover(provider);
    const at = this.at;
    this.at = undefined;
    const visit = ++this.visits;
    // Visit 1 on the request's start reading is implied by startCall's, for a telemetry that says so.
    if (at === undefined || visit !== 1 || !this.firstAtStart) {
      this.tel.attemptStart(visit, at ?? this.clock());
    }
    return visit;
  }

  /** Visit `visit` succeeded. */
  succeeded(visit: number): void {
    const now = this.clock();
    // The visit that answers ends the request: the request's end is this reading.
    this.at = now;
    if (visit === 1 && this.visits === 1) this.firstWonAt = now;
    else this.tel.attemptEnd(visit, 'success', undefined, now);
  }

  /** Tells the failover the request is making, to `to` (`undefined`: no other provider could be tried). */
  private tellFailover(to: string | undefined): void {
    const leaving = this.leaving;
    if (leaving === undefined) return;
    this.leaving = undefined;
    this.tel.failover(leaving[0], leaving[1], to);
  }

  /** Tells visit 1's held success on its own: the request did not end with it alone. */
  private tellFirstWon(): void {
    const at = this.firstWonAt;
    if (at === undefined) return;
    this.firstWonAt = undefined;
    this.tel.attemptEnd(1, 'success', undefined, at);
  }

  /** Visit `visit` failed with `failure`; `failover` is the engine's answer (or 1 when none was asked). */
  failed(visit: number, failure: VisitFailure, from: string, failover: number): void {
    const type = errorTypeOf(failure.error);
    this.tel.attemptEnd(visit, 'failure', type, this.clock());
    if (failover === 0) this.leaving = [from, type];
    else {
      const refused = stopRefusal(failover);
      if (refused !== undefined) this.tel.refused(refused);
    }
  }

  /**
   * Ends the request when `routed` settles. Told once its traversal's
   * synchronous part has run: a visit that starts later (after a wait or a
   * failure) reads a start of its own.
   */
  watch(routed: Promise<unknown>, signal: AbortSignal): void {
    this.at = undefined;
    routed.then(
      () => {
        const won = this.firstWonAt;
        if (won !== undefined && this.visits === 1) {
          this.tel.firstAttemptSucceeded(won);
          return;
        }
        this.tellFirstWon();
        this.tel.end('success', this.visits, undefined, this.at ?? this.clock());
      },
      (error: unknown) => {
        this.tellFailover(undefined);
        this.tellFirstWon();
        this.tel.end(
          signal.aborted ? 'cancelled' : 'failure',
          this.visits,
          errorTypeOf(error),
          this.clock(),
        );
      },
    );
  }
}

/**
 * Recovery probes out per circuit, shared by the routers over it (an adapter's twin routers):
 * while one is out, the circuit gets no other probe (see `RouterCore.admit`).
 */
const probesOut = new WeakMap<CircuitBreaker, number>();

function probeStarted(breaker: CircuitBreaker): void {
  probesOut.set(breaker, (probesOut.get(breaker) ?? 0) + 1);
}

/** `admit()` result for a provider that has no circuit: admitted, nothing to release. */
const NO_PERMIT = -1;
/** `admit()` results below this are skips. */
const SKIP_CIRCUIT_OPEN = -2;
const SKIP_PROBE_BUSY = -3;
/** The provider would take a recovery probe, but every provider is ejected: the outage gate decides. */
const SKIP_OUTAGE = -4;

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

  /**
   * A visit may get a backup (a provider's `attemptTimeoutMs` was left out, and there is
   * another provider): such requests take the parallel traversal, which can run two visits.
   */
  private readonly backups: boolean;
  /** Some provider has a visit deadline (`timeoutMs`): a derived cut needs a deadline. */
  private readonly visitDeadlines: boolean;

  constructor(readonly config: RouterConfig<R>) {
    this.clock = config.clock;
    this.sleep = config.sleep;
    this.wheel = timerWheelFor(config.sleep, config.clock);
    this.random = config.random;
    this.budget = config.budget;
    this.health = config.health;
    this.limited = config.providers.some((p) => p.limiter !== undefined);
    const { providers } = config;
    this.backups =
      providers.length > 1 &&
      config.selection.type !== 'race' &&
      providers.some((p) => p.config.attemptTimeout.derived);
    this.visitDeadlines = providers.some((p) => p.config.timeoutMs !== Number.POSITIVE_INFINITY);
    // The outage gate is the panic rule's cadence: off with it.
    this.gate =
      config.panic === undefined ? undefined : outageGateFor(config.providers[0]?.breaker);
    if (this.gate !== undefined) {
      for (const p of config.providers) this.watchSignal(p, this.gate);
    }
  }

  /**
   * A health signal (a passing health check, a channel back to READY) half-opens
   * `p`'s circuit before its open duration is over: the outage gate lets that
   * provider's probe go at once, ahead of the cadence, since there is evidence
   * it answers (a lazy half-open after the open duration is no signal).
   */
  private watchSignal(p: ProviderRuntime<R>, gate: OutageGate): void {
    const breaker = p.breaker;
    if (breaker === undefined) return;
    breaker.onStateChange((e) => {
      // A signal is spent once the circuit opens again (its probe failed).
      if (e.to === 'open' && gate.signalled === p.index) gate.signalled = -1;
      if (e.to !== 'half-open' || gate.forcing) return;
      const s = breaker.toJSON();
      if (e.at < s.openedAt + s.openDurationMs) gate.signalled = p.index;
    });
  }

  /**
   * A health signal from outside the router (a passing health check, a
   * connection back): `p`'s open circuit and the registry's half-open at
   * once, and while every provider is ejected the outage gate lets `p`'s
   * probe go with the next request. A circuit already half-open — its last
   * probe found no connection and was neutral — is signalled too: the state
   * change alone would miss it. The signal never closes a circuit; the probe does.
   */
  signalHealthy(p: ProviderRuntime<R>): void {
    this.health.halfOpen(p.id);
    const breaker = p.breaker;
    if (breaker === undefined) return;
    breaker.halfOpen();
    const gate = this.gate;
    if (gate !== undefined && breaker.state === 'half-open') gate.signalled = p.index;
  }

  /**
   * The transport's view of `p` (`RouterImpl.signalReachable`): unreachable, it is visited after
   * every other provider; reachable again, it is a health signal too.
   */
  signalReachable(p: ProviderRuntime<R>, reachable: boolean): void {
    this.flag(p, 'unreachable', !reachable);
    if (reachable) this.signalHealthy(p);
  }

  /**
   * What `p`'s health service said (`RouterImpl.signalServing`): not serving, its circuit opens
   * now and it is visited after every other provider; serving, it is a health signal.
   */
  signalServing(p: ProviderRuntime<R>, serving: boolean): void {
    this.flag(p, 'notServing', !serving);
    if (serving) this.signalHealthy(p);
    else p.breaker?.trip();
  }

  /** Providers the transport or their health service says cannot answer now. */
  private flagged = 0;

  private flag(p: ProviderRuntime<R>, which: 'unreachable' | 'notServing', on: boolean): void {
    const before = p.unreachable || p.notServing;
    p[which] = on;
    const after = p.unreachable || p.notServing;
    if (before !== after) this.flagged += after ? 1 : -1;
  }

  /** Some provider has an adaptive concurrency limit. */
  readonly limited: boolean;

  /**
   * A request's visiting order: the selection's, with the providers whose adaptive limit has
   * no room for a `criticality` request moved after the others (they would refuse it), and
   * those the transport or their health service says cannot answer (unreachable, not serving)
   * after every other one, so they get a call (or a probe) only when no other provider answered it.
   */
  arrange(order: readonly number[], criticality: Criticality): readonly number[] {
    if (this.flagged === 0 && !this.limited) return order;
    const { providers } = this.config;
    const able: number[] = [];
    const full: number[] = [];
    const unable: number[] = [];
    for (const i of order) {
      const q = providers[i] as ProviderRuntime<R>;
      if (q.unreachable || q.notServing) unable.push(i);
      else if (q.limiter?.hasRoom(criticality) === false) full.push(i);
      else able.push(i);
    }
    if (full.length === 0 && unable.length === 0) return order;
    return able.concat(full, unable);
  }

  /**
   * After `p` admitted a `criticality` request with circuit `permit`: a slot of `p`'s adaptive
   * limit (`undefined` when `p` has no limit), or the limit's refusal, for which the admission
   * is undone (neutral: the circuit never hears of it; a probe it claimed is not out).
   */
  takeSlot(
    p: ProviderRuntime<R>,
    permit: number,
    criticality: Criticality,
  ): Result<LimitPermit | undefined, ConcurrencyLimitError> {
    const limiter = p.limiter;
    if (limiter === undefined) return NO_SLOT;
    const slot = limiter.tryAcquire(criticality);
    if (!slot.ok) {
      this.visitEnded(p, permit, this.claimedHealthProbe);
      if (permit >= 0) p.breaker?.release(permit, { outcome: 'neutral' });
    }
    return slot;
  }

  /** Records `p`'s limit refusal as a skip; returns the visit list (allocated on first use). */
  skipFull(
    p: ProviderRuntime<R>,
    visits: RoutingVisit[] | undefined,
    rt: RouteTelemetry | undefined,
  ): RoutingVisit[] {
    const reason: RoutingSkipReason = 'concurrency-limit';
    if (this.skipped.active) this.skipped.emit({ providerId: p.id, reason });
    rt?.tel.refused('concurrency-limit');
    visits ??= [];
    visits.push({ providerId: p.id, status: 'skipped', reason });
    return visits;
  }

  /**
   * The error of a request no provider answered: the last limit refusal when no provider was
   * visited and a limit refused it (the request was never sent, and overload is why), else a
   * `RoutingError` with the traversal's visits.
   */
  exhausted(visits: RoutingVisit[] | undefined, refusal: ConcurrencyLimitError | undefined): Error {
    if (refusal !== undefined && visits?.every((v) => v.status === 'skipped') !== false) {
      return refusal;
    }
    return new RoutingError(visits ?? []);
  }

  /** One probe per interval while every provider is ejected; `undefined` when the panic rule is off. */
  private readonly gate: OutageGate | undefined;
  /** The permit of the provider the last `takeOutageProbe()` admitted. */
  private outagePermit = NO_PERMIT;

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
      // A probe still out (a hung one, whose lease ran out) is not joined by another user call.
      if (isProbePermit(permit) && (probesOut.get(breaker) ?? 0) > 0) {
        breaker.release(permit, { outcome: 'neutral' });
        return SKIP_PROBE_BUSY;
      }
    }
    // With every provider ejected, recovery probes go out at the outage gate's cadence, not
    // each circuit's own: n circuits probing on their own would send n probes per interval.
    if ((healthProbe || isProbePermit(permit)) && this.inOutage()) {
      if (permit >= 0) breaker?.release(permit, { outcome: 'neutral' });
      return SKIP_OUTAGE;
    }
    if (healthProbe) p.healthProbing = true;
    if (isProbePermit(permit)) probeStarted(breaker as CircuitBreaker);
    this.claimedHealthProbe = healthProbe;
    return permit;
  }

  /** A visit admitted with `permit` ended: its provider's recovery probe, if it was one, is no longer out. */
  visitEnded(p: ProviderRuntime<R>, permit: number, healthProbe: boolean): void {
    if (healthProbe) p.healthProbing = false;
    const breaker = p.breaker;
    if (breaker !== undefined && isProbePermit(permit)) {
      probesOut.set(breaker, (probesOut.get(breaker) ?? 1) - 1);
    }
  }

  /**
   * True when the outage gate applies: the panic rule is on and every
   * provider is ejected. A half-open circuit counts as ejected (its provider
   * has not answered yet: a probe has to find out), as does a provider the
   * consulted health registry reports anything but closed. A provider with
   * neither is never ejected.
   */
  inOutage(): boolean {
    if (this.gate === undefined) return false;
    const { providers, consultHealth } = this.config;
    for (let i = 0; i < providers.length; i++) {
      const q = providers[i] as ProviderRuntime<R>;
      const state = q.breaker?.state;
      if (
        !(state !== undefined && state !== 'closed') &&
        !(consultHealth && this.health.circuitState(q.id) !== 'closed')
      ) {
        return false;
      }
    }
    return true;
  }

  /**
   * The outage gate (every provider ejected): once the probe interval has
   * passed since the last outage probe, admits the next provider in rotation
   * (registration order) that can take a probe — its circuit half-opens at
   * once, as for a panic visit — and returns it (its permit in
   * `outagePermit`); else `undefined`, and the request is refused. This one
   * probe per interval replaces both the circuits' own probes and the panic
   * rule's ratio while the outage lasts.
   */
  takeOutageProbe(): ProviderRuntime<R> | undefined {
    const gate = this.gate as OutageGate;
    const now = this.clock();
    const { providers } = this.config;
    if (gate.signalled >= 0) {
      // A provider a health signal half-opened is probed now, once, whatever the cadence.
      const q = providers[gate.signalled] as ProviderRuntime<R>;
      gate.signalled = -1;
      const permit = this.panicAdmit(q, SKIP_CIRCUIT_OPEN);
      if (permit >= NO_PERMIT) {
        gate.lastProbeAt = now;
        this.outagePermit = permit;
        return q;
      }
    }
    if (now < gate.nextAt) return undefined;
    // Read only once the cached time has come, not per refused request.
    const { intervalMs, lastOpenedAt } = this.outageSchedule(now);
    // The first probe waits an interval after the last ejection, as that circuit alone would.
    const due = Math.max(gate.lastProbeAt, lastOpenedAt) + intervalMs;
    if (now < due) {
      gate.nextAt = due;
      return undefined;
    }
    const n = providers.length;
    // Two rounds: the providers able to answer first; those the transport or their health
    // service says cannot answer (unreachable, not serving) only when no other can be probed.
    for (let i = 0; i < 2 * n; i++) {
      const q = providers[(gate.cursor + i) % n] as ProviderRuntime<R>;
      if (q.unreachable || q.notServing ? i < n : i >= n) continue;
      const permit = this.panicAdmit(q, SKIP_CIRCUIT_OPEN);
      if (permit >= NO_PERMIT) {
        gate.cursor = (q.index + 1) % n;
        gate.lastProbeAt = now;
        gate.nextAt = now + intervalMs;
        this.outagePermit = permit;
        return q;
      }
    }
    return undefined;
  }

  /** The outage probe's permit (read right after `takeOutageProbe()` returned a provider). */
  get outageProbePermit(): number {
    return this.outagePermit;
  }

  /**
   * The outage gate's interval — the shortest open duration in force among
   * the providers' circuits (and the consulted registry's), so the outage is
   * probed as often as one circuit alone would probe it, never more — and
   * the clock time the last of them opened.
   */
  private outageSchedule(now: number): { intervalMs: number; lastOpenedAt: number } {
    let intervalMs = Number.POSITIVE_INFINITY;
    let lastOpenedAt = Number.NEGATIVE_INFINITY;
    const { providers, consultHealth } = this.config;
    const registryMs = consultHealth ? this.health.openDurationMs : undefined;
    for (let i = 0; i < providers.length; i++) {
      const q = providers[i] as ProviderRuntime<R>;
      const b = q.breaker;
      if (b !== undefined) {
        const s = b.toJSON();
        intervalMs = Math.min(intervalMs, s.openDurationMs);
        if (!s.isolated && s.openedAt > lastOpenedAt) lastOpenedAt = s.openedAt;
      }
      if (typeof registryMs === 'number' && this.health.circuitState(q.id) === 'open') {
        intervalMs = Math.min(intervalMs, registryMs);
        lastOpenedAt = Math.max(lastOpenedAt, now + this.health.retryAfterMs(q.id) - registryMs);
      }
    }
    return { intervalMs: intervalMs === Number.POSITIVE_INFINITY ? 0 : intervalMs, lastOpenedAt };
  }

  /** Records a skip of every provider in `order` from position `from` on but `except`; returns the visit list. */
  skipRest(
    order: readonly number[],
    from: number,
    except: ProviderRuntime<R> | undefined,
    visits: RoutingVisit[] | undefined,
    rt: RouteTelemetry | undefined,
  ): RoutingVisit[] | undefined {
    const { providers } = this.config;
    for (let k = from; k < order.length; k++) {
      const q = providers[order[k] as number] as ProviderRuntime<R>;
      if (q === except) continue;
      visits = this.skip(q, SKIP_CIRCUIT_OPEN, visits);
      rt?.tel.refused('circuit-open');
    }
    return visits;
  }

  /**
   * A request that found every provider ejected at its first skip (position
   * `from` of `order`): the outage gate's probe when it is its turn and the
   * request has visited no provider yet — one attempt, and no failover after
   * it (another ejected provider would be just another probe) — else refused.
   */
  private async routeOutage<T>(
    fn: RouteOperation<R, T>,
    signal: AbortSignal,
    policy: ErrorPolicy | undefined,
    bounds: RequestBounds,
    order: readonly number[],
    from: number,
    visits: RoutingVisit[] | undefined,
    generation: number,
    rt: RouteTelemetry | undefined,
  ): Promise<T> {
    const { criticality } = bounds;
    const p = visits === undefined ? this.takeOutageProbe() : undefined;
    visits = this.skipRest(order, from, p, visits, rt);
    if (p === undefined) throw new RoutingError(visits ?? []);
    const healthProbe = this.claimedHealthProbe;
    const permit = this.outagePermit;
    const slot = this.takeSlot(p, permit, criticality);
    if (!slot.ok) throw this.exhausted(this.skipFull(p, visits, rt), slot.error);
    let outcome: LimitOutcome = 'ignored';
    const visit = rt === undefined ? 0 : rt.visit(p.id);
    if (this.selected.active) this.selected.emit({ providerId: p.id, visit: 1, hedge: false });
    try {
      const value = await runVisit(p, permit, true, fn, signal, policy, this, bounds);
      outcome = 'answered';
      rt?.succeeded(visit);
      this.won(p, generation, true);
      return value;
    } catch (error) {
      outcome = visitLimitOutcome(error, signal);
      if (!(error instanceof VisitFailure)) throw error;
      visits = this.fail(p, error, visits);
      rt?.failed(visit, error, p.id, 1);
      if (error.verdict.failover === false) throw error.error;
      throw new RoutingError(visits);
    } finally {
      slot.value?.release(outcome);
      this.visitEnded(p, permit, healthProbe);
    }
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
      // The gate is shared by twin routers: neither may take this for a health signal.
      const gate = this.gate;
      if (gate !== undefined) gate.forcing = true;
      breaker.halfOpen();
      if (gate !== undefined) gate.forcing = false;
      permit = breaker.tryAcquire();
      if (permit < 0) return code;
    }
    // Ejected by the consulted health registry: the visit is its recovery call, one at a time.
    const healthProbe = this.config.consultHealth && this.health.circuitState(p.id) !== 'closed';
    const busy =
      breaker !== undefined && isProbePermit(permit) && (probesOut.get(breaker) ?? 0) > 0;
    if ((healthProbe && p.healthProbing) || busy) {
      if (permit >= 0) breaker?.release(permit, { outcome: 'neutral' });
      return code;
    }
    if (healthProbe) p.healthProbing = true;
    if (isProbePermit(permit)) probeStarted(breaker as CircuitBreaker);
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
    bounds: RequestBounds,
    rt: RouteTelemetry | undefined,
  ): Promise<T> {
    const { deadlineAt, criticality } = bounds;
    const { selection, providers } = this.config;
    const generation = selection.generation;
    const order = this.arrange(selection.order(), criticality);
    let visits: RoutingVisit[] | undefined;
    let refusal: ConcurrencyLimitError | undefined;
    // The panic rule is drawn at the first skip of the request: 0 not yet, 1 won, -1 lost or used.
    let panic = 0;
    for (let k = 0; k < order.length; k++) {
      if (signal.aborted) throw abortError(signal);
      const p = providers[order[k] as number] as ProviderRuntime<R>;
      let permit = this.admit(p);
      if (permit < NO_PERMIT) {
        if (panic === 0) {
          if (this.inOutage()) {
            return this.routeOutage(fn, signal, policy, bounds, order, k, visits, generation, rt);
          }
          panic = this.drawPanic() ? 1 : -1;
        }
        if (panic === 1) permit = this.panicAdmit(p, permit);
        if (permit < NO_PERMIT) {
          visits = this.skip(p, permit, visits);
          rt?.tel.refused('circuit-open');
          continue;
        }
        panic = -1;
      }
      const slot = this.takeSlot(p, permit, criticality);
      if (!slot.ok) {
        refusal = slot.error;
        visits = this.skipFull(p, visits, rt);
        continue;
      }
      const visit = rt === undefined ? 0 : rt.visit(p.id);
      const healthProbe = this.claimedHealthProbe;
      const probe = this.isProbe(permit);
      if (this.selected.active)
        this.selected.emit({ providerId: p.id, visit: k + 1, hedge: false });
      let outcome: LimitOutcome = 'ignored';
      try {
        // The first attempt runs inline rather than in runVisit's async frame (hot path);
        // only a failure that may be retried goes on in runVisit.
        const start = this.clock();
        let value: T;
        p.load.begin(start);
        try {
          value = await startAttempt(p, fn, signal, 1, this, visitDeadline(p, start));
        } catch (error) {
          p.load.end(start);
          // A recovery probe is never retried: its failure re-opens the circuit at once.
          if (p.config.engine === undefined || probe) {
            throw singleAttemptFailed(p, permit, error, signal, policy, this.clock() - start, this);
          }
          value = await runVisit(p, permit, false, fn, signal, policy, this, bounds, {
            error,
            startedAt: start,
          });
          outcome = 'answered';
          rt?.succeeded(visit);
          this.won(p, generation, probe);
          return value;
        }
        p.load.end(start);
        visitSucceeded(p, permit, start, this);
        outcome = 'answered';
        rt?.succeeded(visit);
        this.won(p, generation, probe);
        return value;
      } catch (error) {
        outcome = visitLimitOutcome(error, signal);
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
        slot.value?.release(outcome);
        this.visitEnded(p, permit, healthProbe);
      }
    }
    throw this.exhausted(visits, refusal);
  }

  /** A request refused before its traversal (no visit): telemetry hears one refused call. */
  refuse(reason: TelemetryRefusal, target: TelemetryTarget = ROUTER_TARGET): void {
    const telemetry = this.config.telemetry;
    if (telemetry === undefined) return;
    const now = telemetry.clock();
    const tel = telemetry.startCall(target, now);
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
    bounds: RequestBounds,
  ): Promise<T> {
    const { deadlineAt } = bounds;
    // A request whose deadline passed before it was admitted never visits a provider: no time is left.
    if (deadlineAt !== Number.POSITIVE_INFINITY && this.clock() >= deadlineAt) {
      this.refuse('deadline-expired', bounds.target);
      const expired = Promise.reject(new DeadlineExceededError());
      if (fallback === undefined) return expired;
      return expired.catch((error: unknown) => fallback(error, { signal }));
    }
    this.budget?.recordRequest();
    const { hedge, selection, telemetry } = this.config;
    let rt: RouteTelemetry | undefined;
    if (telemetry !== undefined) {
      const now = telemetry.clock();
      const tel = telemetry.startCall(bounds.target, now);
      if (tel !== undefined) {
        rt = new RouteTelemetry(tel, telemetry.clock, now, telemetry.firstAttemptAtStart);
      }
    }
    const mayBackUp =
      this.backups &&
      bounds.idempotent &&
      (this.visitDeadlines || deadlineAt !== Number.POSITIVE_INFINITY);
    const routed =
      hedge === undefined && selection.type !== 'race' && !mayBackUp
        ? this.routeSequential(fn, signal, policy, bounds, rt)
        : routeParallel(this, fn, signal, policy, bounds, rt);
    rt?.watch(routed, signal);
    if (fallback === undefined) return routed;
    return routed.catch((error: unknown) => {
      // Fallback covers routing failures, not cancellation or a throwing policy.
      if (signal.aborted || isPolicyError(error)) throw error;
      return fallback(error, { signal });
    });
  }
}
