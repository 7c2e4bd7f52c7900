import type { RouteSelectionType } from '@breakwater/core/types';

/** What `retry.onRetry` hears (core's `RetryEvent`: the failed attempt and the wait). */
export interface RetryEvent {
  attempt: number;
  delayMs: number;
}

/** The seven entry points every scenario runs against. */
export const ENTRY_POINTS = [
  'protect',
  'router',
  'grpc-js interceptor',
  'grpc-js routing channel',
  'nice-grpc middleware',
  'tRPC resilienceLink',
  'tRPC routingLink',
] as const;

/** One of {@link ENTRY_POINTS}. */
export type EntryPoint = (typeof ENTRY_POINTS)[number];

/** What a server does with one attempt, in terms both transports can play. */
export type Step =
  /** Answer (after `delayMs`). */
  | { kind: 'ok'; delayMs?: number }
  /** Fail with a gRPC status (tRPC plays UNAVAILABLE as 503; `pushback` as the pushback trailer / Retry-After). */
  | {
      kind: 'fail';
      status: 'UNAVAILABLE' | 'DEADLINE_EXCEEDED' | 'CANCELLED';
      /** gRPC: `grpc-retry-pushback-ms` (a string verbatim); tRPC: `Retry-After` in seconds (ms / 1000, a string verbatim). */
      pushback?: number | string;
      /** gRPC: the status text, sent trailers-only as a middle tier forwards its backend's error; tRPC ignores it (the HTTP status decides). Defaults to the chaos server's. */
      details?: string;
    }
  /** The server takes the request, then the connection under it drops without an answer. */
  | { kind: 'reset' }
  /** Never answer: the attempt ends when the client gives up. */
  | { kind: 'hang' }
  /** gRPC unary: send the response message, then die before the status. */
  | { kind: 'die-after-message' }
  /** A reverse proxy answers 502 (tRPC: an HTML page; gRPC: UNAVAILABLE after the request reached it). */
  | { kind: 'proxy-502' };

/** A server's behaviour: one step per attempt of each call, then `rest` for every later attempt. */
export interface ServerScript {
  /** Step `i` plays attempt `i + 1` of each call. Defaults to none. */
  steps?: readonly Step[];
  /** Every later attempt. Defaults to `{ kind: 'ok' }`. */
  rest?: Step;
  /** The server is stopped before the calls: connections are refused (the request is never sent). */
  down?: boolean;
}

/** The one options object of a scenario, in the new vocabulary (VOCABULARY.md). */
export interface ConformanceOptions {
  timeoutMs?: number | false;
  attemptTimeoutMs?: number | false;
  retry?:
    | {
        attempts?: number;
        backoff?: { baseDelayMs: number; jitter?: 'none'; maxDelayMs?: number };
        maxPushbackMs?: number;
        onRetry?: (event: RetryEvent) => void;
      }
    | false;
  hedge?: { delayMs: number; attempts?: number } | false;
  /** Routing entry points only: how a target is picked (`race`: every target at once). */
  selection?: { type: RouteSelectionType };
  budget?: { ratio?: number; minRetriesPerSecond?: number; ttlMs?: number } | false;
  circuit?: { failureThreshold?: number; failureSpanMs?: number; openDurationMs?: number } | false;
  /** A bulkhead: calls at once, and calls waiting for a slot. */
  concurrency?: { limit: number; maxQueue?: number } | false;
  /** A token bucket: one token per call. The routing entry points have none. */
  rateLimit?: { capacity: number; refillPerSecond: number } | false;
}

/** Caller-side outcome names, the same for every transport. */
export type CallerCode =
  | 'OK'
  | 'UNAVAILABLE'
  | 'DEADLINE_EXCEEDED'
  | 'CANCELLED'
  | 'BAD_GATEWAY'
  | 'REFUSED'
  | 'RESOURCE_EXHAUSTED'
  | 'OTHER';

/** What one call got. */
export interface CallOutcome {
  code: CallerCode;
  /** The server that answered a successful call. */
  servedBy?: 'primary' | 'secondary' | undefined;
  /** Wall time of the call in ms. */
  elapsedMs: number;
  /** The raw error, for messages. */
  error?: unknown;
}

/** One attempt as a server saw it, the same for every transport. */
export interface ServerAttempt {
  server: 'primary' | 'secondary';
  callId: string;
  /** Arrival time, epoch ms. */
  receivedAt: number;
  /** `'OK'`, `'UNAVAILABLE'`, `'CANCELLED'` …, `undefined` while running. */
  outcome: string | undefined;
}

/** How a scenario makes its call(s). */
export interface CallPlan {
  /** The non-idempotent method (gRPC `UnaryUnsafe`, tRPC mutation). Defaults to the idempotent one. */
  unsafe?: boolean;
  /** The caller aborts the call this many ms after the server received its first attempt. Defaults to never. */
  cancelAfterArrivalMs?: number;
  /** The caller's signal is already aborted when the call starts. Defaults to false. */
  abortedBefore?: boolean;
}

/** A value that differs by transport (e.g. a proxy's 502 is UNAVAILABLE in gRPC). */
export type ByTransport<T> = T | { grpc: T; trpc: T };

/** What a scenario expects of one call. */
export interface Expected {
  caller: ByTransport<CallerCode>;
  servedBy?: 'primary' | 'secondary';
  /** Server-side outcomes of the call's attempts, over every server, in arrival order. */
  attempts: ReadonlyArray<ByTransport<string>>;
  /** Gaps between consecutive attempts' arrivals, as `[min, max]` ms. */
  gapsMs?: ReadonlyArray<readonly [number, number]>;
  /** `attempt` of each `retry.onRetry` event, in order. */
  retryEvents?: readonly number[];
  /** `delayMs` of each `retry.onRetry` event, as `[min, max]`. */
  retryDelaysMs?: ReadonlyArray<readonly [number, number]>;
  /** Caller-side duration, as `[min, max]` ms. */
  elapsedMs?: readonly [number, number];
}

/** Everything a multi-call scenario can look at. */
export interface Observation {
  outcomes: CallOutcome[];
  attempts: ServerAttempt[];
  retryEvents: RetryEvent[];
}

/** One row of the table. */
export interface Scenario {
  id: string;
  /** What the row shows (and which issue behaviour it pins, e.g. "(0)"). */
  title: string;
  primary: ServerScript;
  /** A second server: routing entry points get both targets; the others use the primary only. */
  secondary?: ServerScript;
  options: ConformanceOptions;
  call?: CallPlan;
  /** A `retry.onRetry` that throws after recording. */
  listenerThrows?: boolean;
  /** Wait this long after the call before judging the servers (late retries would show). Defaults to 0. */
  settleMs?: number;
  /** One call and its expectation … */
  expect?: Expected;
  /** … or `calls` calls judged by `check`. */
  calls?: number;
  /**
   * Calls made first, while every server answers (`warm-1` …), so the entry point learns
   * the servers' normal latency; then each server plays its script, with its record
   * cleared. Defaults to none: the scripts play from the first call.
   */
  warmUpCalls?: number;
  check?: (observation: Observation) => void;
  /**
   * … or calls made at once, in an order of the row's own: it starts calls, waits for
   * the server to see them, changes the primary's script, and asserts (instead of
   * `expect`/`check`).
   */
  choreography?: (row: RowContext) => Promise<void>;
  /** Entry points the row does not apply to, each with the reason. */
  notApplicable?: Partial<Record<EntryPoint, string>>;
}

/** One call a harness makes: the plan, and the caller's signal when it cancels. */
export interface CallRequest extends CallPlan {
  signal?: AbortSignal | undefined;
}

/** What a {@link Scenario.choreography} can do: run by the table for one entry point. */
export interface RowContext {
  readonly entry: EntryPoint;
  readonly transport: 'grpc' | 'trpc';
  /** Starts call `callId` (not awaited: calls run at once). */
  start(callId: string, request?: CallRequest): Promise<CallOutcome>;
  /** Resolves once a server received an attempt of `callId` (fails after 5 s). */
  arrived(callId: string): Promise<void>;
  /** The primary plays `script` from its next attempt on (what it saw so far is forgotten). */
  play(script: ServerScript): void;
  /** What the servers saw of `callId` (of every call when left out), in arrival order. */
  attempts(callId?: string): ServerAttempt[];
}

/** A running entry point over real servers. */
export interface Harness {
  call(callId: string, request: CallRequest): Promise<CallOutcome>;
  close(): Promise<void>;
}

/** Addresses of the started servers handed to a driver. */
export interface Targets {
  primary: string;
  secondary?: string | undefined;
  /** A third server, for routing entry points only (the outage gate's tests). */
  tertiary?: string | undefined;
}

/** Turns the scenario's options into an entry point's configuration. */
export interface Driver {
  entry: EntryPoint;
  transport: 'grpc' | 'trpc';
  /** Routing entry points register every server; the others use the primary. */
  routing: boolean;
  open(targets: Targets, options: ConformanceOptions): Harness;
}

/** A bad options object and how every entry point must refuse it. */
export interface OptionRow {
  id: string;
  options: ConformanceOptions;
  /** `RangeError` or `TypeError`. */
  error: new (
    ...args: never[]
  ) => Error;
  /** The option path the message must name. */
  path: RegExp;
  notApplicable?: Partial<Record<EntryPoint, string>>;
}
