import { STOP_NOT_RETRYABLE } from '../attempts/engine.js';
import { WheelEntry } from '../deadline/timer-wheel.js';
import type { ConcurrencyLimitError } from '../errors/concurrency-limit-error.js';
import type { RoutingVisit } from '../errors/routing-error.js';
import { abortError } from '../internal/abort.js';
import { onAbort } from '../internal/on-abort.js';
import type { ErrorPolicy } from '../retry/verdict.js';
import type { RouterCore, RouteTelemetry } from './core.js';
import { LinkedController } from './linked-controller.js';
import type { RouteOperation } from './types.js';
import {
  anotherMayAnswer,
  lostToAnother,
  type ProviderRuntime,
  type RequestBounds,
  runVisit,
  VisitFailure,
  visitDeadline,
  visitLimitOutcome,
} from './visit.js';

interface Running<R> {
  p: ProviderRuntime<R>;
  controller: LinkedController;
  /** The visit's backup timer (see `backUp`), once it is armed. */
  backup: BackupTimer | undefined;
}

/**
 * A visit's backup timer, on the router's timer wheel (the wheel the attempt timeouts use:
 * one armed per request, it must cost no host timer or `AbortController` of its own).
 */
class BackupTimer extends WheelEntry {
  constructor(private readonly fire: () => void) {
    super();
  }

  expire(): void {
    this.fire();
  }
}

/**
 * Traversal with several visits in flight: `race` starts every eligible
 * provider at once; hedging starts the next provider whenever the latest
 * visit has been outstanding longer than the hedge delay (fixed, or the
 * observed latency percentile), as the router's engine allows (`hedge.attempts`,
 * the retry budget). A failed visit fails over to the next provider at once
 * when the engine allows it (the budget again). The first success wins and
 * aborts the rest, whose outcomes are neutral for circuits and health unless
 * they ran past their provider's normal latency (a slow call: a failure).
 *
 * A visit whose provider's `attemptTimeoutMs` was left out gets a backup when
 * it runs past its derived cut (`AttemptTimeout.forAttempt`): the next provider
 * starts beside it, as a hedge would, and the slow visit keeps running until
 * the deadline. The backup is charged to the budget like a failover; when the
 * budget refuses it, when another provider could not answer, or when the
 * request is not safe to repeat, none starts and the slow visit goes on alone.
 * @internal
 */
export function routeParallel<R, T>(
  core: RouterCore<R>,
  fn: RouteOperation<R, T>,
  signal: AbortSignal,
  policy: ErrorPolicy | undefined,
  bounds: RequestBounds,
  rt: RouteTelemetry | undefined,
): Promise<T> {
  const { deadlineAt, criticality } = bounds;
  const { selection, providers, hedge, engine } = core.config;
  const generation = selection.generation;
  const order = core.arrange(selection.order(), criticality);
  const race = selection.type === 'race';
  const sample = hedge?.sample;
  const started = sample === undefined ? 0 : core.clock();

  return new Promise<T>((resolve, reject) => {
    const running = new Set<Running<R>>();
    let visits: RoutingVisit[] | undefined;
    let refusal: ConcurrencyLimitError | undefined;
    let next = 0;
    let launched = 0;
    let hedges = 0;
    let done = false;
    let timer: AbortController | undefined;
    let stopListening = () => {};
    // The panic rule, drawn at the request's first skip: 0 not yet, 1 won, -1 lost or used.
    let panic = 0;

    /**
     * Ends the traversal and aborts the visits still running: with the caller's
     * own reason when the caller cancelled (SPEC §0: the decisive reason reaches
     * the operation), else with the neutral "answered first" reason.
     */
    const finish = (callerAborted: boolean) => {
      done = true;
      timer?.abort();
      stopListening();
      for (const r of running) {
        if (r.backup !== undefined) core.wheel.cancel(r.backup);
        r.controller.abort(callerAborted ? signal.reason : lostToAnother());
        r.controller.unlink();
      }
      running.clear();
    };
    const fail = (error: unknown, callerAborted = false) => {
      if (done) return;
      finish(callerAborted);
      reject(error);
    };
    // A signal that aborted before the traversal reaches its visits through their controllers.
    if (!signal.aborted) stopListening = onAbort(signal, () => fail(abortError(signal), true));

    /** Starts the next admissible provider; false when none is left. */
    const launch = (asHedge: boolean): boolean => {
      while (next < order.length) {
        let p = providers[order[next++] as number] as ProviderRuntime<R>;
        let permit = core.admit(p);
        let last = false;
        if (permit < -1 && panic === 0 && core.inOutage()) {
          // Every provider is ejected: the outage gate's probe, if it is this request's turn and
          // nothing was visited yet; no failover or hedge after it (that would be another probe).
          panic = -1;
          const probe = launched === 0 && visits === undefined ? core.takeOutageProbe() : undefined;
          visits = core.skipRest(order, next - 1, probe, visits, rt);
          next = order.length;
          if (probe === undefined) return false;
          p = probe;
          permit = core.outageProbePermit;
          last = true;
        }
        if (permit < -1) {
          if (panic === 0) panic = core.drawPanic() ? 1 : -1;
          if (panic === 1) permit = core.panicAdmit(p, permit);
          if (permit < -1) {
            visits = core.skip(p, permit, visits);
            rt?.tel.refused('circuit-open');
            continue;
          }
          panic = -1;
        }
        const slot = core.takeSlot(p, permit, criticality);
        if (!slot.ok) {
          refusal = slot.error;
          visits = core.skipFull(p, visits, rt);
          if (last) return false;
          continue;
        }
        const limitPermit = slot.value;
        const visit = rt === undefined ? 0 : rt.visit(p.id);
        const healthProbe = core.claimedHealthProbe;
        const probe = core.isProbe(permit);
        const entry: Running<R> = {
          p,
          controller: new LinkedController(signal),
          backup: undefined,
        };
        running.add(entry);
        launched++;
        if (core.selected.active) {
          core.selected.emit({ providerId: p.id, visit: launched, hedge: asHedge });
        }
        runVisit(p, permit, probe, fn, entry.controller.signal, policy, core, bounds).then(
          (value) => {
            if (entry.backup !== undefined) core.wheel.cancel(entry.backup);
            limitPermit?.release('answered');
            core.visitEnded(p, permit, healthProbe);
            if (done) return;
            running.delete(entry);
            entry.controller.unlink();
            finish(false);
            // The request's latency as the caller saw it (a hedge winner's own attempt time
            // would hide how slow the abandoned visit was and drag the percentile down).
            if (sample !== undefined) {
              const now = core.clock();
              sample.record(now - started, now);
            }
            if (rt !== undefined) {
              rt.succeeded(visit);
              if (asHedge) rt.tel.hedgeWon(visit);
            }
            core.won(p, generation, probe);
            resolve(value);
          },
          (error: unknown) => {
            if (entry.backup !== undefined) core.wheel.cancel(entry.backup);
            limitPermit?.release(visitLimitOutcome(error, entry.controller.signal));
            core.visitEnded(p, permit, healthProbe);
            running.delete(entry);
            entry.controller.unlink();
            if (done) return;
            if (!(error instanceof VisitFailure)) return fail(error);
            visits = core.fail(p, error, visits);
            if (error.verdict.failover === false) {
              rt?.failed(visit, error, p.id, 1);
              return fail(error.error);
            }
            // Fail over at once, if the engine allows it; a race already started everyone.
            if (!race && next < order.length) {
              const go = engine.mayFailOver(error.verdict, deadlineAt);
              rt?.failed(visit, error, p.id, go);
              if (go === STOP_NOT_RETRYABLE) return fail(error.error);
              if (go >= 0 && launch(false)) return;
            } else rt?.failed(visit, error, p.id, 1);
            if (running.size === 0) fail(core.exhausted(visits, refusal));
          },
        );
        if (!race) {
          arm(p);
          backUp(entry);
        }
        return true;
      }
      return false;
    };

    /** (Re)starts the hedge timer for the visit just launched. */
    const arm = (current: ProviderRuntime<R>) => {
      timer?.abort();
      timer = undefined;
      if (hedge === undefined || 1 + hedges >= engine.attempts || next >= order.length) return;
      const delayMs = hedge.delayMs >= 0 ? hedge.delayMs : hedge.sample?.value(core.clock());
      // Percentile hedging waits until enough latencies have been observed.
      if (delayMs === undefined) return;
      const t = new AbortController();
      timer = t;
      engine.schedule(
        delayMs,
        () => {
          if (done) return;
          // Within the attempts and the budget (a refused withdrawal means no hedge).
          if (!engine.mayHedge(1 + hedges, deadlineAt)) {
            // Within the attempts and before the deadline: the budget refused it.
            if (core.clock() < deadlineAt) rt?.tel.refused('budget-exhausted');
            return;
          }
          const from = current.id;
          hedges++;
          if (!launch(true)) {
            hedges--;
            if (running.size === 0) fail(core.exhausted(visits, refusal));
            return;
          }
          rt?.tel.hedge(rt.visits);
          if (core.hedged.active) {
            const to = providers[order[next - 1] as number] as ProviderRuntime<R>;
            core.hedged.emit({ fromProviderId: from, toProviderId: to.id, delayMs });
          }
        },
        t.signal,
      );
    };

    /**
     * Arms the backup of the visit just launched at its provider's derived cut (none without
     * one: an explicit `attemptTimeoutMs` cuts the attempt itself, in `startAttempt`).
     */
    const backUp = (entry: Running<R>) => {
      const { p } = entry;
      const timeout = p.config.attemptTimeout;
      if (!bounds.idempotent || !timeout.derived || next >= order.length) return;
      const now = core.clock();
      const until = Math.min(visitDeadline(p, now), deadlineAt);
      if (until === Number.POSITIVE_INFINITY) return;
      const left = until - now;
      const cutMs = timeout.forAttempt(p.id, left, true, now);
      if (cutMs >= left) return;
      const launchedBefore = launched;
      const timer = new BackupTimer(() => {
        // Over, or already followed by a hedge or a failover: nothing to back up.
        if (done || !running.has(entry) || launched !== launchedBefore) return;
        // No other provider could answer: the slow visit is the call's best chance.
        if (!anotherMayAnswer(p, core)) return;
        if (engine.mayFailOver(undefined, deadlineAt) < 0) {
          if (core.clock() < deadlineAt) rt?.tel.refused('budget-exhausted');
          return;
        }
        if (!launch(true)) return;
        rt?.tel.hedge(rt.visits);
        if (core.hedged.active) {
          const to = providers[order[next - 1] as number] as ProviderRuntime<R>;
          core.hedged.emit({ fromProviderId: p.id, toProviderId: to.id, delayMs: cutMs });
        }
      });
      entry.backup = timer;
      core.wheel.schedule(timer, cutMs);
    };

    if (race) {
      while (launch(false));
    } else {
      launch(false);
    }
    if (!done && running.size === 0) fail(core.exhausted(visits, refusal));
  });
}
