import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import {
  type AttemptRecord,
  analyzeScenario,
  type CallRecord,
  type ScenarioReport,
} from './analyze.js';
import { checkCallable, checkRange } from './check.js';
import { type OpenLoopResult, runOpenLoop } from './open-loop.js';
import { checkPhases, runTimeline, type ScenarioPhase, timelineDuration } from './timeline.js';

/** What a client's call reports back on success. */
export interface ScenarioCallResult {
  /** Replica that answered (used to time a restored replica's return). */
  replica?: string | undefined;
}

/** One client (lane) driven by the scenario's load. */
export interface ScenarioClient {
  /** Lane name, e.g. `"grpc/breakwater"`; prefixes every call id. */
  name: string;
  /** Makes one call; must send `callId` as `x-call-id` so servers can count attempts. Rejects on failure. */
  call(request: {
    /** Id of this call, `"<name>-<index>"`; send it as `x-call-id`. */
    callId: string;
    /** Position of the call in this client's schedule, from 0. */
    index: number;
  }): Promise<ScenarioCallResult | undefined>;
  /** Short code for a failure (e.g. `"UNAVAILABLE"`). Defaults to the error's `code` or `name`. */
  describeError?: (error: unknown) => string;
}

/** Live counts of one client while the scenario runs. */
export interface LiveClientStats {
  /** The client's name. */
  client: string;
  /** Calls started so far. */
  offered: number;
  /** Calls that succeeded so far. */
  succeeded: number;
  /** Calls that failed so far. */
  failed: number;
  /** Calls started but not yet settled. */
  inFlight: number;
}

/** A progress snapshot. */
export interface ScenarioProgress {
  /** Time since the scenario started, in ms. */
  elapsedMs: number;
  /** Planned length of the timeline (sum of phase durations), in ms. */
  totalMs: number;
  /** Name of the current phase. */
  phase: string;
  /** Position of the current phase in the timeline, from 0. */
  phaseIndex: number;
  /** A copy of each client's live counts, in client order. */
  clients: LiveClientStats[];
}

/** Options of {@link runScenario}. */
export interface RunScenarioOptions {
  /** The timeline; its total duration is the length of the load. */
  phases: readonly ScenarioPhase[];
  /** Clients driven side by side, each at `rate`. */
  clients: readonly ScenarioClient[];
  /** Calls started per second per client (open loop). */
  rate: number;
  /** Collects server-side attempts once the load has drained. Defaults to none (attempt metrics stay empty). */
  attempts?: () => Promise<readonly AttemptRecord[]> | readonly AttemptRecord[];
  /** Receives a snapshot every `tickMs`. Defaults to nothing. */
  onProgress?: (progress: ScenarioProgress) => void;
  /** Progress interval in ms. Defaults to 250. */
  tickMs?: number;
  /** After the last start, how long to wait for in-flight calls in ms. Defaults to 5000. */
  drainTimeoutMs?: number;
  /** Width of the report's time buckets in ms. Defaults to 1000. */
  bucketMs?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits (load schedule, phases, ticks). Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** A finished run: the analysed report plus the raw records. */
export interface ScenarioRun {
  /** The analysed numbers (see `analyzeScenario`). */
  report: ScenarioReport;
  /** Every call every client made, in completion order. */
  calls: CallRecord[];
  /** What each client's load generator did, in client order. */
  loads: OpenLoopResult[];
}

function defaultDescribe(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown } | null;
  if (e && (typeof e.code === 'string' || typeof e.code === 'number')) return String(e.code);
  return typeof e?.name === 'string' ? e.name : 'error';
}

/**
 * Runs a scenario: the phase timeline and one open-loop load generator per
 * client start together; every call is recorded (start, latency, outcome,
 * replica); when the load has drained, server-side attempts are collected and
 * everything is analysed into per-client, per-phase and per-second numbers.
 */
export async function runScenario(options: RunScenarioOptions): Promise<ScenarioRun> {
  checkPhases(options.phases);
  const rate = checkRange('rate', options.rate, Number.MIN_VALUE);
  if (!Array.isArray(options.clients) || options.clients.length === 0) {
    throw new TypeError('clients must be a non-empty array');
  }
  for (const [i, c] of options.clients.entries()) checkCallable(`clients[${i}].call`, c?.call);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const totalMs = timelineDuration(options.phases);
  const tickMs = checkRange('tickMs', options.tickMs ?? 250, 1);
  const calls: CallRecord[] = [];
  const live = options.clients.map(
    (c): LiveClientStats => ({ client: c.name, offered: 0, succeeded: 0, failed: 0, inFlight: 0 }),
  );
  let phase = { name: options.phases[0]?.name ?? '', index: 0 };
  const startedAt = clock();
  const progress = (): ScenarioProgress => ({
    elapsedMs: clock() - startedAt,
    totalMs,
    phase: phase.name,
    phaseIndex: phase.index,
    clients: live.map((l) => ({ ...l })),
  });

  // The load runs until the timeline ends, which may be later than planned (see `holdMs`).
  const timelineDone = new AbortController();
  const lane = (client: ScenarioClient, stats: LiveClientStats) =>
    runOpenLoop({
      rate,
      durationMs: totalMs * 10,
      signal: timelineDone.signal,
      drainTimeoutMs: options.drainTimeoutMs ?? 5_000,
      clock,
      sleep,
      send: async ({ index }) => {
        const callId = `${client.name}-${index}`;
        const begin = clock();
        stats.offered++;
        stats.inFlight++;
        try {
          const result = await client.call({ callId, index });
          stats.succeeded++;
          calls.push({
            client: client.name,
            callId,
            startedAt: begin,
            latencyMs: clock() - begin,
            ok: true,
            replica: result?.replica,
          });
        } catch (error) {
          stats.failed++;
          calls.push({
            client: client.name,
            callId,
            startedAt: begin,
            latencyMs: clock() - begin,
            ok: false,
            error: (client.describeError ?? defaultDescribe)(error),
          });
        } finally {
          stats.inFlight--;
        }
      },
    });

  const ticking = new AbortController();
  const ticker = (async () => {
    if (!options.onProgress) return;
    while (!ticking.signal.aborted) {
      await sleep(tickMs, ticking.signal);
      if (!ticking.signal.aborted) options.onProgress(progress());
    }
  })();
  let loads: OpenLoopResult[];
  let windows: Awaited<ReturnType<typeof runTimeline>>;
  try {
    [windows, ...loads] = await Promise.all([
      runTimeline({
        phases: options.phases,
        clock,
        sleep,
        onPhase: (p, index) => {
          phase = { name: p.name, index };
        },
      }).finally(() => timelineDone.abort()),
      ...options.clients.map((c, i) => lane(c, live[i] as LiveClientStats)),
    ]);
  } finally {
    ticking.abort();
    await ticker;
  }
  options.onProgress?.(progress());
  const endedAt = Math.max(startedAt + totalMs, windows.at(-1)?.end ?? startedAt);
  const attempts = options.attempts ? await options.attempts() : [];
  const report = analyzeScenario({
    clients: options.clients.map((c) => c.name),
    calls,
    attempts,
    phases: windows,
    startedAt,
    endedAt,
    ...(options.bucketMs === undefined ? {} : { bucketMs: options.bucketMs }),
  });
  return { report, calls, loads };
}
