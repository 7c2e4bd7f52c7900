import type { Clock } from '@breakwater/core/time';

/** What a chaos server saw for one attempt. Carries ids and timings, never payloads. */
export interface ObservedAttempt {
  /** Short method name, e.g. `"Unary"`. */
  method: string;
  /** Value of the `x-call-id` request header, when sent. */
  callId: string | undefined;
  /** Attempts this server has seen for the call id, this one included (1 without a call id). */
  attempt: number;
  /** Value of the `grpc-previous-rpc-attempts` request header, when sent. */
  previousAttempts: number | undefined;
  /** Absolute deadline of the attempt (epoch ms), when the client set one. */
  deadline: number | undefined;
  /** Time left until that deadline when the attempt arrived, in ms. */
  deadlineRemainingMs: number | undefined;
  /** Arrival time (epoch ms). */
  receivedAt: number;
  /** Replica that handled it. */
  replica: string;
  /** Status name the attempt ended with (`"OK"`, `"UNAVAILABLE"`, `"CANCELLED"` …); undefined while running. */
  outcome: string | undefined;
}

/** Counts what a server received so tests and reports can show amplification. */
export interface AttemptRecorder {
  /** Every recorded attempt in arrival order (bounded by `maxObservations`). */
  readonly observed: readonly ObservedAttempt[];
  /** Attempts seen for `callId`. */
  attempts(callId: string): number;
  /** Attempts seen in total, or for one method. */
  total(method?: string): number;
  /** Forgets everything recorded so far. */
  reset(): void;
}

/** @internal */
export interface RecorderInternals extends AttemptRecorder {
  begin(entry: Omit<ObservedAttempt, 'attempt' | 'receivedAt' | 'outcome'>): ObservedAttempt;
}

/** @internal */
export function createRecorder(clock: Clock, maxObservations: number): RecorderInternals {
  let observed: ObservedAttempt[] = [];
  let perCall = new Map<string, number>();
  let perMethod = new Map<string, number>();
  let total = 0;
  return {
    get observed() {
      return observed;
    },
    attempts: (callId) => perCall.get(callId) ?? 0,
    total: (method) => (method === undefined ? total : (perMethod.get(method) ?? 0)),
    reset() {
      observed = [];
      perCall = new Map();
      perMethod = new Map();
      total = 0;
    },
    begin(entry) {
      total += 1;
      perMethod.set(entry.method, (perMethod.get(entry.method) ?? 0) + 1);
      let attempt = 1;
      if (entry.callId !== undefined) {
        attempt = (perCall.get(entry.callId) ?? 0) + 1;
        perCall.set(entry.callId, attempt);
      }
      // Every key named, in one order: a spread followed by more keys takes a slow path in
      // Node 20's V8 (about 1 µs per added key), and benchmarks have this server on their path.
      const record: ObservedAttempt = {
        method: entry.method,
        callId: entry.callId,
        attempt,
        previousAttempts: entry.previousAttempts,
        deadline: entry.deadline,
        deadlineRemainingMs: entry.deadlineRemainingMs,
        receivedAt: clock(),
        replica: entry.replica,
        outcome: undefined,
      };
      if (observed.length < maxObservations) observed.push(record);
      return record;
    },
  };
}
