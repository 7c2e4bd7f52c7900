import type {
  CallTelemetry,
  CircuitBreaker,
  Criticality,
  Telemetry,
  TelemetryTarget,
} from '@breakwater/core';
import {
  CRITICALITIES,
  type TelemetryAttemptOutcome,
  type TelemetryCallOutcome,
  type TelemetryRefusal,
} from '@breakwater/core/adapter';
import { GrpcStatus } from '@breakwater/core/grpc';
import {
  checkOptions,
  describeValue,
  keysOf,
  optionPath,
  optionTypeError,
} from '@breakwater/core/internal';
import type { AdaptiveLimiter } from '@breakwater/core/types';
import {
  type Attributes,
  type Context,
  type Counter,
  context,
  type Histogram,
  type MeterProvider,
  metrics,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

/** Options of {@link otelTelemetry}. */
export interface OtelTelemetryOptions {
  /** Where the metrics go. Defaults to the global `MeterProvider` of `@opentelemetry/api`. */
  meterProvider?: MeterProvider;
  /** Where attempt spans go. Defaults to the global `TracerProvider` of `@opentelemetry/api`. */
  tracerProvider?: TracerProvider;
  /** Add an event to the caller's active span for each retry, hedge, failover, refusal and deadline. Defaults to `true`. */
  spanEvents?: boolean;
  /** One `INTERNAL` child span per attempt (never a `CLIENT` span: transport instrumentation keeps those). Defaults to `false`. */
  attemptSpans?: boolean;
}

/** Name and version of the instrumentation scope of every meter and tracer this package creates. */
export const INSTRUMENTATION_SCOPE = '@breakwater/otel';

/** Metric names, as listed in the README (units there too). */
export const METRICS = Object.freeze({
  attempts: 'breakwater.attempts',
  retries: 'breakwater.retries',
  hedgesSent: 'breakwater.hedges.sent',
  hedgesWon: 'breakwater.hedges.won',
  refusals: 'breakwater.refusals',
  deadlinesExceeded: 'breakwater.deadlines_exceeded',
  circuitState: 'breakwater.circuit.state',
  circuitTransitions: 'breakwater.circuit.transitions',
  failovers: 'breakwater.failovers',
  providerHealth: 'breakwater.provider.health',
  concurrencyLimit: 'breakwater.concurrency.limit',
  concurrencyInFlight: 'breakwater.concurrency.in_flight',
  concurrencyRefusals: 'breakwater.concurrency.refusals',
  attemptDuration: 'breakwater.attempt.duration',
  callDuration: 'breakwater.call.duration',
  callAttempts: 'breakwater.call.attempts',
});

// The adapters report gRPC statuses by name as `error.type`; `rpc.grpc.status_code` wants the number.
const GRPC_CODES: Readonly<Record<string, number>> = GrpcStatus;

const CIRCUIT_STATES = ['closed', 'open', 'half-open'] as const;

/** Attribute sets of one target, built once and reused by every call of it. */
class TargetAttributes {
  readonly base: Attributes;
  readonly attemptOk: Attributes;
  readonly callOk: Attributes;
  private readonly byKey = new Map<string, Attributes>();
  /** Successful attempts, counted here and observed at collection: no SDK call per attempt. */
  private attemptsOk = 0;
  /** Other attempts, by their (cached, so identical) attribute set. */
  private readonly attemptsBy = new Map<Attributes, number>();

  constructor(readonly target: TelemetryTarget) {
    const base: Attributes = {};
    if (target.system !== undefined) base['rpc.system'] = target.system;
    if (target.service !== undefined) base['rpc.service'] = target.service;
    if (target.method !== undefined) base['rpc.method'] = target.method;
    if (target.serverAddress !== undefined) base['server.address'] = target.serverAddress;
    if (target.name !== undefined) base['breakwater.name'] = target.name;
    if (target.provider !== undefined) base['breakwater.provider'] = target.provider;
    this.base = Object.freeze(base);
    this.attemptOk = this.with('breakwater.outcome', 'success', undefined);
    this.callOk = this.attemptOk;
  }

  /** Counts one attempt with `attributes` (one of this target's cached sets). */
  count(attributes: Attributes): void {
    if (attributes === this.attemptOk) this.attemptsOk++;
    else this.attemptsBy.set(attributes, (this.attemptsBy.get(attributes) ?? 0) + 1);
  }

  /** Reports the cumulative attempt counts. */
  observe(result: { observe(value: number, attributes?: Attributes): void }): void {
    if (this.attemptsOk > 0) result.observe(this.attemptsOk, this.attemptOk);
    for (const [attributes, n] of this.attemptsBy) result.observe(n, attributes);
  }

  /** `base` plus `key` = `value` and, for a failure, `error.type` (and the gRPC status code). */
  with(key: string, value: string, errorType: string | undefined): Attributes {
    const cacheKey = `${key}\u0000${value}\u0000${errorType ?? ''}`;
    let attributes = this.byKey.get(cacheKey);
    if (attributes === undefined) {
      const a: Attributes = { ...this.base, [key]: value };
      if (errorType !== undefined) a['error.type'] = errorType;
      if (this.target.system === 'grpc') {
        const type = errorType ?? (key === 'error.type' ? value : value === 'success' ? 'OK' : '');
        const code = GRPC_CODES[type];
        if (code !== undefined) a['rpc.grpc.status_code'] = code;
      }
      attributes = Object.freeze(a);
      // Bounded: keys are outcome/reason names and error types, never call data.
      this.byKey.set(cacheKey, attributes);
    }
    return attributes;
  }
}

class Instruments {
  readonly retries: Counter;
  readonly hedgesSent: Counter;
  readonly hedgesWon: Counter;
  readonly refusals: Counter;
  readonly deadlines: Counter;
  readonly transitions: Counter;
  readonly failovers: Counter;
  readonly attemptDuration: Histogram;
  readonly callDuration: Histogram;
  readonly callAttempts: Histogram;

  constructor(provider: MeterProvider, owner: OtelTelemetry) {
    const meter = provider.getMeter(INSTRUMENTATION_SCOPE);
    const counter = (name: string, unit: string, description: string) =>
      meter.createCounter(name, { unit, description });
    meter
      .createObservableCounter(METRICS.attempts, {
        unit: '{attempt}',
        description: 'Attempts, by outcome.',
      })
      .addCallback((result) => owner.observeAttempts(result));
    this.retries = counter(METRICS.retries, '{retry}', 'Retries scheduled, by the error retried.');
    this.hedgesSent = counter(METRICS.hedgesSent, '{attempt}', 'Hedged attempts sent.');
    this.hedgesWon = counter(METRICS.hedgesWon, '{call}', 'Calls answered by a hedged attempt.');
    this.refusals = counter(
      METRICS.refusals,
      '{refusal}',
      'Calls, retries, hedges or failovers refused, by reason.',
    );
    this.deadlines = counter(
      METRICS.deadlinesExceeded,
      '{deadline}',
      'Deadlines that passed, of an attempt or of the call.',
    );
    this.transitions = counter(
      METRICS.circuitTransitions,
      '{transition}',
      'Circuit breaker state transitions.',
    );
    this.failovers = counter(
      METRICS.failovers,
      '{failover}',
      'Router failovers, by provider left.',
    );
    this.attemptDuration = meter.createHistogram(METRICS.attemptDuration, {
      unit: 's',
      description: 'Duration of each attempt.',
    });
    this.callDuration = meter.createHistogram(METRICS.callDuration, {
      unit: 's',
      description: 'Duration of each call, all attempts and waits included.',
    });
    this.callAttempts = meter.createHistogram(METRICS.callAttempts, {
      unit: '{attempt}',
      description:
        'Attempts per call, for calls of other than one attempt (the others: the call.duration count less this one).',
      advice: { explicitBucketBoundaries: [0, 1, 2, 3, 4, 5, 6, 8, 10] },
    });
    meter
      .createObservableGauge(METRICS.circuitState, {
        unit: '1',
        description: 'Circuit state: 1 for the current state, 0 for the others.',
      })
      .addCallback((result) => owner.observeCircuits(result));
    meter
      .createObservableGauge(METRICS.providerHealth, {
        unit: '1',
        description: 'Router provider health: 1 healthy, 0 unhealthy.',
      })
      .addCallback((result) => owner.observeProviders(result));
    meter
      .createObservableGauge(METRICS.concurrencyLimit, {
        unit: '{call}',
        description: 'Adaptive concurrency limit: calls the target may run at once now.',
      })
      .addCallback((result) => owner.observeLimits(result, (l) => l.limit));
    meter
      .createObservableGauge(METRICS.concurrencyInFlight, {
        unit: '{call}',
        description: 'Calls holding a slot of the adaptive concurrency limit now.',
      })
      .addCallback((result) => owner.observeLimits(result, (l) => l.inFlight));
    meter
      .createObservableCounter(METRICS.concurrencyRefusals, {
        unit: '{call}',
        description: 'Calls the adaptive concurrency limit refused, by criticality.',
      })
      .addCallback((result) => owner.observeLimitRefusals(result));
  }
}

interface WatchedCircuit {
  readonly breaker: WeakRef<CircuitBreaker>;
  readonly attributes: Attributes;
}

interface WatchedLimiter {
  readonly limiter: WeakRef<AdaptiveLimiter>;
  readonly attributes: Attributes;
  /** `attributes` plus `breakwater.criticality`, one set per tier. */
  readonly byTier: ReadonlyArray<readonly [Criticality, Attributes]>;
}

/**
 * One call's telemetry: its caller's context, start time and running
 * attempts. Readied again for a later call when the driver hands it back
 * ({@link OtelCall.reset}), so a reused protect call costs no object here.
 * It reads no clock: durations are differences of the readings the driver
 * hands in (core's, on the stack's clock), and a call that succeeds first
 * time never looks its caller's span up (only an event needs it).
 */
class OtelCall implements CallTelemetry {
  private attrs: TargetAttributes;
  /**
   * The caller's context when the call started (its span gets the events);
   * dropped at the end. Taken at the start although most calls never use it:
   * an event may be told later from a timer that runs in another call's
   * context (the shared deadline wheel, a retry's wait), where only this
   * copy still names the caller.
   */
  private parent: Context | undefined;
  private startedAt: number;
  /**
   * Start of attempt 1: the call's start unless `attemptStart(1, now)` told
   * a later one (the call waited in a queue; see
   * {@link OtelTelemetry.firstAttemptAtStart}). A number from the start
   * (not a declared field, which starts `undefined`), so V8 keeps it an
   * unboxed double.
   */
  private firstStart = 0;
  /** Start of attempts 2…, created by the second attempt. */
  private laterStarts: number[] | undefined = undefined;
  private attemptSpans: Array<Span | undefined> | undefined = undefined;

  constructor(
    readonly owner: OtelTelemetry,
    attrs: TargetAttributes,
    parent: Context | undefined,
    now: number,
  ) {
    this.attrs = attrs;
    this.parent = parent;
    this.startedAt = now;
    this.firstStart = now;
  }

  /**
   * The caller's recording span, looked up when an event needs it: the
   * context was captured at the start, so events go to the caller's span
   * even when told from a timer that runs in another call's context.
   */
  private get span(): Span | undefined {
    const parent = this.parent;
    if (parent === undefined || !this.owner.spanEvents) return undefined;
    const span = trace.getSpan(parent);
    return span?.isRecording() ? span : undefined;
  }

  attemptStart(attempt: number, now: number): void {
    try {
      if (attempt === 1) this.firstStart = now;
      else {
        this.laterStarts ??= [];
        this.laterStarts[attempt - 2] = now;
      }
      const tracer = this.owner.tracer;
      if (tracer !== undefined) this.startAttemptSpan(tracer, attempt);
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  private startAttemptSpan(tracer: Tracer, attempt: number): void {
    const span = tracer.startSpan(
      'breakwater.attempt',
      {
        kind: SpanKind.INTERNAL,
        attributes: { ...this.attrs.base, 'breakwater.attempt': attempt },
      },
      this.parent,
    );
    this.attemptSpans ??= [];
    this.attemptSpans[attempt - 1] = span;
  }

  attemptEnd(
    attempt: number,
    outcome: TelemetryAttemptOutcome,
    errorType: string | undefined,
    now: number,
  ): void {
    try {
      const attrs = this.attrs;
      const attributes =
        outcome === 'success'
          ? attrs.attemptOk
          : attrs.with('breakwater.outcome', outcome, errorType);
      attrs.count(attributes);
      this.recordAttempt(
        attempt === 1 ? this.firstStart : this.laterStarts?.[attempt - 2],
        now,
        attributes,
      );
      if (this.attemptSpans !== undefined) this.endAttemptSpan(attempt, outcome, errorType);
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  /**
   * {@link OtelCall.attemptEnd} of a successful attempt 1, then
   * {@link OtelCall.end} of a successful one-attempt call, in one hook and
   * on the same helpers. Attempt 1 started at the call's start reading
   * (unless `attemptStart(1)` told a later one: the call waited in a queue),
   * and this end reading is the call's, so the two durations are then equal
   * by construction: one number, computed once and recorded in both
   * histograms.
   */
  firstAttemptSucceeded(now: number): void {
    try {
      const { attrs, startedAt } = this;
      const { instruments } = this.owner;
      attrs.count(attrs.attemptOk);
      const seconds = (now - startedAt) / 1_000;
      const started = this.firstStart;
      if (started === startedAt) instruments.attemptDuration.record(seconds, attrs.attemptOk);
      else this.recordAttempt(started, now, attrs.attemptOk);
      if (this.attemptSpans !== undefined) this.endAttemptSpan(1, 'success', undefined);
      // One attempt: not in breakwater.call.attempts (see end).
      instruments.callDuration.record(seconds, attrs.callOk);
      this.abandonAttempts();
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
    // The object may wait for reuse: it keeps none of the caller's objects alive.
    this.parent = undefined;
  }

  /** Records the duration of an attempt that started at `started`; none when no start was told (`undefined`: a later attempt's start was not told). */
  private recordAttempt(started: number | undefined, now: number, attributes: Attributes): void {
    if (started !== undefined) {
      this.owner.instruments.attemptDuration.record((now - started) / 1_000, attributes);
    }
  }

  private endAttemptSpan(
    attempt: number,
    outcome: TelemetryAttemptOutcome,
    errorType: string | undefined,
  ): void {
    const spans = this.attemptSpans as Array<Span | undefined>;
    const span = spans[attempt - 1];
    if (span === undefined) return;
    spans[attempt - 1] = undefined;
    span.setAttribute('breakwater.outcome', outcome);
    if (outcome !== 'success') {
      if (errorType !== undefined) span.setAttribute('error.type', errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  retry(attempt: number, delayMs: number, reason: string): void {
    try {
      this.owner.instruments.retries.add(1, this.attrs.with('error.type', reason, undefined));
      this.span?.addEvent('breakwater.retry', {
        'breakwater.attempt': attempt,
        'breakwater.delay_ms': delayMs,
        'error.type': reason,
      });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  hedge(attempt: number): void {
    try {
      this.owner.instruments.hedgesSent.add(1, this.attrs.base);
      this.span?.addEvent('breakwater.hedge', { 'breakwater.attempt': attempt });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  hedgeWon(attempt: number): void {
    try {
      this.owner.instruments.hedgesWon.add(1, this.attrs.base);
      this.span?.addEvent('breakwater.hedge_won', { 'breakwater.attempt': attempt });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  failover(from: string, reason: string): void {
    try {
      this.owner.instruments.failovers.add(1, this.attrs.with('breakwater.provider', from, reason));
      this.span?.addEvent('breakwater.failover', {
        'breakwater.provider': from,
        'error.type': reason,
      });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  refused(reason: TelemetryRefusal): void {
    try {
      this.owner.instruments.refusals.add(
        1,
        this.attrs.with('breakwater.reason', reason, undefined),
      );
      this.span?.addEvent('breakwater.refusal', { 'breakwater.reason': reason });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  deadlineExceeded(scope: 'attempt' | 'call'): void {
    try {
      this.owner.instruments.deadlines.add(
        1,
        this.attrs.with('breakwater.deadline.scope', scope, undefined),
      );
      this.span?.addEvent('breakwater.deadline_exceeded', { 'breakwater.deadline.scope': scope });
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
  }

  end(
    outcome: TelemetryCallOutcome,
    attempts: number,
    errorType: string | undefined,
    now: number,
  ): void {
    try {
      const { instruments } = this.owner;
      const attributes =
        outcome === 'success'
          ? this.attrs.callOk
          : this.attrs.with('breakwater.outcome', outcome, errorType);
      instruments.callDuration.record((now - this.startedAt) / 1_000, attributes);
      // One attempt is what a call costs when nothing goes wrong: those calls are the
      // call.duration count minus this histogram's (see the README), so the SDK records once less.
      if (attempts !== 1) instruments.callAttempts.record(attempts, attributes);
      this.abandonAttempts();
    } catch {
      // A broken meter or tracer never breaks the call it observes.
    }
    // The object may wait for reuse: it keeps none of the caller's objects alive.
    this.parent = undefined;
  }

  /** Ends the attempt spans the call's end abandoned (a losing hedge, a caller's cancel). */
  private abandonAttempts(): void {
    const spans = this.attemptSpans;
    if (spans === undefined) return;
    for (const span of spans) {
      if (span === undefined) continue;
      span.setAttribute('breakwater.outcome', 'abandoned');
      span.end();
    }
    this.attemptSpans = undefined;
  }
}

/** The `Telemetry` of {@link otelTelemetry}. */
class OtelTelemetry implements Telemetry {
  /** Every method catches what the SDK throws, and every call method is there. */
  readonly unguarded = true;
  /**
   * Attempt 1 starts with the call unless told otherwise (see
   * {@link OtelCall.firstStart}), so the usual call needs no `attemptStart`;
   * with attempt spans every start is told, to open each span when its
   * attempt starts (a span's start cannot be moved afterwards).
   */
  readonly firstAttemptAtStart: boolean;
  readonly instruments: Instruments;
  readonly tracer: Tracer | undefined;
  readonly spanEvents: boolean;
  private readonly targets = new WeakMap<TelemetryTarget, TargetAttributes>();
  /** Every target seen (a bounded set: one per stack or method). */
  private readonly allTargets = new Set<TargetAttributes>();
  private readonly circuits = new Set<WatchedCircuit>();
  private readonly watched = new WeakSet<CircuitBreaker>();
  private readonly limiters = new Set<WatchedLimiter>();
  /** Each router's provider health reader and one attribute set per provider. */
  private readonly routers: Array<{
    healthy: (index: number) => boolean;
    attributes: readonly Attributes[];
  }> = [];

  constructor(options: OtelTelemetryOptions) {
    this.spanEvents = options.spanEvents ?? true;
    this.instruments = new Instruments(options.meterProvider ?? metrics.getMeterProvider(), this);
    this.tracer =
      options.attemptSpans === true
        ? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_SCOPE)
        : undefined;
    this.firstAttemptAtStart = this.tracer === undefined;
  }

  /** The last target seen and its attributes: a stack's calls ask for the same one again and again. */
  private lastTarget: TelemetryTarget | undefined;
  private lastAttrs: TargetAttributes | undefined;

  private attributesOf(target: TelemetryTarget): TargetAttributes {
    if (target === this.lastTarget) return this.lastAttrs as TargetAttributes;
    let attrs = this.targets.get(target);
    if (attrs === undefined) {
      attrs = new TargetAttributes(target);
      this.targets.set(target, attrs);
      this.allTargets.add(attrs);
    }
    this.lastTarget = target;
    this.lastAttrs = attrs;
    return attrs;
  }

  startCall(target: TelemetryTarget, now: number): CallTelemetry | undefined {
    try {
      // Only events and attempt spans need the caller's context; its span is looked up by them.
      const parent = this.spanEvents || this.tracer !== undefined ? context.active() : undefined;
      const attrs = this.attributesOf(target);
      return new OtelCall(this, attrs, parent, now);
    } catch {
      // A broken SDK or context manager never breaks the call it observes.
      return undefined;
    }
  }

  circuit(breaker: CircuitBreaker, target: TelemetryTarget): void {
    try {
      // A breaker shared by several methods is watched once, under the first.
      if (this.watched.has(breaker)) return;
      this.watched.add(breaker);
      const attributes = this.attributesOf(target).base;
      this.circuits.add({ breaker: new WeakRef(breaker), attributes });
      breaker.onStateChange((change) => {
        this.instruments.transitions.add(1, {
          ...attributes,
          'breakwater.circuit.from': change.from,
          'breakwater.circuit.to': change.to,
        });
      });
    } catch {
      // A broken SDK or context manager never breaks the call it observes.
    }
  }

  concurrencyLimit(limiter: AdaptiveLimiter, target: TelemetryTarget): void {
    try {
      const attributes = this.attributesOf(target).base;
      const byTier = CRITICALITIES.map(
        (c) => [c, Object.freeze({ ...attributes, 'breakwater.criticality': c })] as const,
      );
      this.limiters.add({ limiter: new WeakRef(limiter), attributes, byTier });
    } catch {
      // A broken SDK never breaks the stack it observes.
    }
  }

  /** Live limiters (forgetting collected ones). */
  private *liveLimiters(): Generator<[AdaptiveLimiter, WatchedLimiter]> {
    for (const watched of this.limiters) {
      const limiter = watched.limiter.deref();
      if (limiter === undefined) this.limiters.delete(watched);
      else yield [limiter, watched];
    }
  }

  /** @internal */
  observeLimits(
    result: { observe(value: number, attributes?: Attributes): void },
    read: (limiter: AdaptiveLimiter) => number,
  ): void {
    for (const [limiter, watched] of this.liveLimiters()) {
      result.observe(read(limiter), watched.attributes);
    }
  }

  /** @internal */
  observeLimitRefusals(result: { observe(value: number, attributes?: Attributes): void }): void {
    for (const [limiter, watched] of this.liveLimiters()) {
      for (const [tier, attributes] of watched.byTier) {
        result.observe(limiter.refusals(tier), attributes);
      }
    }
  }

  providers(
    ids: readonly string[],
    healthy: (index: number) => boolean,
    target: TelemetryTarget,
  ): void {
    try {
      const base = this.attributesOf(target).base;
      const attributes = ids.map((id) => Object.freeze({ ...base, 'breakwater.provider': id }));
      this.routers.push({ healthy, attributes });
    } catch {
      // A broken SDK never breaks the router it observes.
    }
  }

  /** @internal */
  observeAttempts(result: { observe(value: number, attributes?: Attributes): void }): void {
    for (const target of this.allTargets) target.observe(result);
  }

  /** @internal */
  observeCircuits(result: { observe(value: number, attributes?: Attributes): void }): void {
    for (const watched of this.circuits) {
      const breaker = watched.breaker.deref();
      if (breaker === undefined) {
        this.circuits.delete(watched);
        continue;
      }
      const state = breaker.state;
      for (const s of CIRCUIT_STATES) {
        result.observe(s === state ? 1 : 0, {
          ...watched.attributes,
          'breakwater.circuit.state': s,
        });
      }
    }
  }

  /** @internal */
  observeProviders(result: { observe(value: number, attributes?: Attributes): void }): void {
    for (const { healthy, attributes } of this.routers) {
      for (let i = 0; i < attributes.length; i++) {
        result.observe(healthy(i) ? 1 : 0, attributes[i]);
      }
    }
  }
}

/**
 * Turns Breakwater's resilience decisions into OpenTelemetry metrics (see
 * {@link METRICS}) and span events on the caller's active span; pass the
 * result as the `telemetry` option of `protect`, `createRouter`,
 * `resilienceInterceptor`, `resilienceMiddleware` or `resilienceLink`. Build
 * one per process and share it: its instruments are created once.
 * @example
 * const telemetry = otelTelemetry();
 * const run = protect({ retry: { attempts: 3 }, telemetry });
 */
export function otelTelemetry(options?: OtelTelemetryOptions): Telemetry {
  return optionPath(
    '',
    () => {
      checkOptions(undefined, options, OPTION_KEYS);
      const o = options ?? {};
      for (const key of ['spanEvents', 'attemptSpans'] as const) {
        const value = o[key];
        if (value !== undefined && typeof value !== 'boolean') {
          throw optionTypeError(key, `must be a boolean, got ${describeValue(value)}`);
        }
      }
      for (const key of ['meterProvider', 'tracerProvider'] as const) {
        const value = o[key];
        if (value !== undefined && (typeof value !== 'object' || value === null)) {
          throw optionTypeError(key, `must be an object, got ${describeValue(value)}`);
        }
      }
      return new OtelTelemetry(o);
    },
    'otelTelemetry',
  );
}

const OPTION_KEYS = keysOf<OtelTelemetryOptions>()([
  'meterProvider',
  'tracerProvider',
  'spanEvents',
  'attemptSpans',
]);
