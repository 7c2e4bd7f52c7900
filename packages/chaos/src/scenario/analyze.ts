import { type LatencySummary, percentile, ratio, summarizeLatency } from './stats.js';
import type { PhaseKind, PhaseWindow } from './timeline.js';

/** What a client saw for one call. */
export interface CallRecord {
  /** Client (lane) that made the call. */
  client: string;
  /** Id sent with every attempt (`x-call-id`), so server-side attempts can be matched. */
  callId: string;
  /** When the call started (epoch ms). */
  startedAt: number;
  /** How long the call took, success or failure, in ms. */
  latencyMs: number;
  /** Whether it succeeded. */
  ok: boolean;
  /** Short error code or name of a failed call. */
  error?: string | undefined;
  /** Replica that answered a successful call, when the response says so. */
  replica?: string | undefined;
}

/** What a server saw: `count` attempts (default 1) of one call id on one replica. */
export interface AttemptRecord {
  /** The call id the attempts carried, matching {@link CallRecord.callId}. */
  callId: string;
  /** Replica that received the attempts. */
  replica: string;
  /** Attempts this record stands for. Defaults to 1. */
  count?: number;
}

/** One bucket (a second by default) of one client's timeline; calls are bucketed by start time. */
export interface SecondPoint {
  /** Bucket start, in seconds since the run started. */
  t: number;
  /** Calls started in the bucket. */
  offered: number;
  /** Of those, calls that succeeded. */
  succeeded: number;
  /** Of those, calls that failed. */
  failed: number;
  /** `succeeded / offered` in [0, 1], undefined for an empty bucket. */
  successRate: number | undefined;
  /** Median latency of every call started in the bucket (failures included) in ms, undefined for an empty bucket. */
  p50: number | undefined;
  /** 99th-percentile latency of those calls in ms, undefined for an empty bucket. */
  p99: number | undefined;
  /** Server-side attempts per call started in the bucket. */
  attemptsPerCall: number | undefined;
  /** Server-side attempts per replica for calls started in the bucket. */
  load: Record<string, number>;
}

/** One client's numbers over one phase. */
export interface PhaseStats {
  /** Name of the phase. */
  phase: string;
  /** Kind of the phase. */
  kind: PhaseKind;
  /** Calls the client started during the phase. */
  offered: number;
  /** Of those, calls that succeeded. */
  succeeded: number;
  /** `succeeded / offered` in [0, 1], undefined when no call started. */
  successRate: number | undefined;
  /** Latency of those calls (failures included), ms. */
  latency: LatencySummary;
  /** Server-side attempts per call started during the phase, undefined when none started. */
  attemptsPerCall: number | undefined;
}

/** One client's numbers over the whole run. */
export interface ClientReport {
  /** The client's name. */
  client: string;
  /** Calls the client started over the run. */
  offered: number;
  /** Of those, calls that succeeded. */
  succeeded: number;
  /** Of those, calls that failed. */
  failed: number;
  /** `succeeded / offered` in [0, 1], undefined when no call started. */
  successRate: number | undefined;
  /** Latency of every call (failures included), ms. */
  latency: LatencySummary;
  /** Success rate over `fault` and `outage` phases. */
  faultSuccessRate: number | undefined;
  /** Server-side attempts per call over `fault` and `outage` phases. */
  faultAttemptsPerCall: number | undefined;
  /** Server-side attempts per call over `outage` phases. */
  outageAttemptsPerCall: number | undefined;
  /** Ms from the moment a phase's `restores` replicas were back (its `enter` done) until one answered this client; undefined if none did. */
  recoveryMs: number | undefined;
  /** Most common error codes, with counts. */
  errors: Record<string, number>;
  /** The client's numbers per phase, in timeline order. */
  phases: PhaseStats[];
  /** The client's time series, one point per `bucketMs`. */
  seconds: SecondPoint[];
}

/** Everything a scenario run measured, ready for tables and charts (times in ms relative to the start). */
export interface ScenarioReport {
  /** When the run started (epoch ms); every other time is relative to it. */
  startedAt: number;
  /** Length of the run in ms. */
  durationMs: number;
  /** Bucket width of the time series in ms. */
  bucketMs: number;
  /** When each phase ran, in timeline order. */
  phases: Array<
    Omit<PhaseWindow, 'start' | 'readyAt' | 'end'> & {
      /** When the phase started, ms after the run started. */
      startMs: number;
      /** When its `enter` had finished, ms after the run started. */
      readyMs: number;
      /** When the phase ended, ms after the run started. */
      endMs: number;
    }
  >;
  /** Every replica that received an attempt, sorted by name. */
  replicas: string[];
  /** One report per client, in the order of {@link AnalyzeInput.clients}. */
  clients: ClientReport[];
}

/** Inputs of {@link analyzeScenario}. */
export interface AnalyzeInput {
  /** Client names in display order. */
  clients: readonly string[];
  /** What the clients saw, one record per call. */
  calls: readonly CallRecord[];
  /** What the servers saw, matched to calls by call id. */
  attempts: readonly AttemptRecord[];
  /** When each phase ran, as `runTimeline` resolves them. */
  phases: readonly PhaseWindow[];
  /** When the run started (epoch ms). */
  startedAt: number;
  /** When the run ended (epoch ms). */
  endedAt: number;
  /** Bucket width of the time series in ms. Defaults to 1000. */
  bucketMs?: number;
}

interface Group {
  calls: CallRecord[];
}

function attemptsOf(calls: readonly CallRecord[], perCall: Map<string, number>): number {
  let n = 0;
  for (const c of calls) n += perCall.get(c.callId) ?? 0;
  return n;
}

function successRate(calls: readonly CallRecord[]): number | undefined {
  return ratio(calls.filter((c) => c.ok).length, calls.length);
}

function phaseStats(
  window: PhaseWindow,
  calls: readonly CallRecord[],
  perCall: Map<string, number>,
): PhaseStats {
  const inside = calls.filter((c) => c.startedAt >= window.start && c.startedAt < window.end);
  return {
    phase: window.name,
    kind: window.kind,
    offered: inside.length,
    succeeded: inside.filter((c) => c.ok).length,
    successRate: successRate(inside),
    latency: summarizeLatency(inside.map((c) => c.latencyMs)),
    attemptsPerCall: ratio(attemptsOf(inside, perCall), inside.length),
  };
}

function inPhases(calls: readonly CallRecord[], windows: readonly PhaseWindow[]): CallRecord[] {
  return calls.filter((c) => windows.some((w) => c.startedAt >= w.start && c.startedAt < w.end));
}

function recovery(
  calls: readonly CallRecord[],
  phases: readonly PhaseWindow[],
): number | undefined {
  const phase = phases.find((p) => p.restores !== undefined);
  if (!phase) return undefined;
  const restored = new Set(phase.restores);
  let first = Number.POSITIVE_INFINITY;
  for (const c of calls) {
    const end = c.startedAt + c.latencyMs;
    if (c.ok && c.replica !== undefined && restored.has(c.replica) && end >= phase.readyAt) {
      first = Math.min(first, end);
    }
  }
  return first === Number.POSITIVE_INFINITY ? undefined : first - phase.readyAt;
}

function series(
  calls: readonly CallRecord[],
  perCallReplica: Map<string, Map<string, number>>,
  perCall: Map<string, number>,
  input: AnalyzeInput,
  bucketMs: number,
): SecondPoint[] {
  const n = Math.max(1, Math.ceil((input.endedAt - input.startedAt) / bucketMs));
  const buckets: Group[] = Array.from({ length: n }, () => ({ calls: [] }));
  for (const c of calls) {
    const i = Math.floor((c.startedAt - input.startedAt) / bucketMs);
    buckets[Math.min(Math.max(i, 0), n - 1)]?.calls.push(c);
  }
  return buckets.map((b, i) => {
    const sorted = b.calls.map((c) => c.latencyMs).sort((x, y) => x - y);
    const load: Record<string, number> = {};
    for (const c of b.calls) {
      for (const [replica, count] of perCallReplica.get(c.callId) ?? []) {
        load[replica] = (load[replica] ?? 0) + count;
      }
    }
    const succeeded = b.calls.filter((c) => c.ok).length;
    return {
      t: (i * bucketMs) / 1000,
      offered: b.calls.length,
      succeeded,
      failed: b.calls.length - succeeded,
      successRate: ratio(succeeded, b.calls.length),
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      attemptsPerCall: ratio(attemptsOf(b.calls, perCall), b.calls.length),
      load,
    };
  });
}

/**
 * Turns raw call and attempt records into per-client, per-phase and per-second
 * numbers. Pure: the same records always give the same report.
 */
export function analyzeScenario(input: AnalyzeInput): ScenarioReport {
  const bucketMs = input.bucketMs ?? 1000;
  const perCall = new Map<string, number>();
  const perCallReplica = new Map<string, Map<string, number>>();
  const replicas = new Set<string>();
  for (const a of input.attempts) {
    const count = a.count ?? 1;
    replicas.add(a.replica);
    perCall.set(a.callId, (perCall.get(a.callId) ?? 0) + count);
    let byReplica = perCallReplica.get(a.callId);
    if (!byReplica) {
      byReplica = new Map();
      perCallReplica.set(a.callId, byReplica);
    }
    byReplica.set(a.replica, (byReplica.get(a.replica) ?? 0) + count);
  }
  const faultWindows = input.phases.filter((p) => p.kind === 'fault' || p.kind === 'outage');
  const outageWindows = input.phases.filter((p) => p.kind === 'outage');
  const clients = input.clients.map((client): ClientReport => {
    const calls = input.calls.filter((c) => c.client === client);
    const fault = inPhases(calls, faultWindows);
    const outage = inPhases(calls, outageWindows);
    const succeeded = calls.filter((c) => c.ok).length;
    const errors: Record<string, number> = {};
    for (const c of calls)
      if (!c.ok) errors[c.error ?? 'error'] = (errors[c.error ?? 'error'] ?? 0) + 1;
    return {
      client,
      offered: calls.length,
      succeeded,
      failed: calls.length - succeeded,
      successRate: ratio(succeeded, calls.length),
      latency: summarizeLatency(calls.map((c) => c.latencyMs)),
      faultSuccessRate: successRate(fault),
      faultAttemptsPerCall: ratio(attemptsOf(fault, perCall), fault.length),
      outageAttemptsPerCall: ratio(attemptsOf(outage, perCall), outage.length),
      recoveryMs: recovery(calls, input.phases),
      errors,
      phases: input.phases.map((w) => phaseStats(w, calls, perCall)),
      seconds: series(calls, perCallReplica, perCall, input, bucketMs),
    };
  });
  return {
    startedAt: input.startedAt,
    durationMs: input.endedAt - input.startedAt,
    bucketMs,
    phases: input.phases.map(({ start, readyAt, end, ...rest }) => ({
      ...rest,
      startMs: start - input.startedAt,
      readyMs: readyAt - input.startedAt,
      endMs: end - input.startedAt,
    })),
    replicas: [...replicas].sort(),
    clients,
  };
}
