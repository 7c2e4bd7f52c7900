/** One HTTP request a chaos tRPC server received. Ids and timings only: no payloads. */
export interface TrpcObservedAttempt {
  /** The `x-call-id` header, else method and URL. */
  callId: string;
  /** Requests seen for the call id, this one included. */
  attempt: number;
  /** Procedure paths in the request. */
  paths: string[];
  /** Arrival time (epoch ms). */
  receivedAt: number;
  /** HTTP status sent, once the response finished. */
  httpStatus: number | undefined;
  /** `'answered'` once a response finished, `'cancelled'` when the client went away first (or the socket was reset); undefined while running. */
  outcome: 'answered' | 'cancelled' | undefined;
}

/** What a chaos tRPC server saw. Counts only: no payloads. */
export interface ChaosTrpcStats {
  /** Name of the server these counts belong to. */
  server: string;
  /** HTTP requests received, faulted ones included. */
  requests: number;
  /** Procedure calls received (a batch of 3 counts 3). */
  calls: number;
  /** Procedure calls per procedure path. */
  procedures: Record<string, number>;
  /** Requests per call id (the `x-call-id` header, else method and URL). */
  attempts: Record<string, number>;
  /** Number of calls in each request, in arrival order. */
  batchSizes: number[];
  /** Injected faults by kind. */
  faults: {
    /** Requests answered with an injected error. */
    error: number;
    /** Requests left unanswered. */
    hang: number;
    /** Requests that got injected latency (they may also have failed or hung). */
    delayed: number;
    /** Event streams cut after `dropStreamAfter` events. */
    dropped: number;
  };
  /** Requests handed to the tRPC handler (not failed or hung by the fault layer). */
  handled: number;
  /** The `lastEventId` each subscription started with (`null` for a fresh start). */
  subscriptionStarts: Array<string | null>;
  /** Every request in arrival order (the first 10 000). */
  observed: TrpcObservedAttempt[];
}

/** Mutable counters behind `stats()`. @internal */
export class TrpcRecorder {
  private data: ChaosTrpcStats;

  constructor(private readonly server: string) {
    this.data = TrpcRecorder.empty(server);
  }

  private static empty(server: string): ChaosTrpcStats {
    return {
      server,
      requests: 0,
      calls: 0,
      procedures: {},
      attempts: {},
      batchSizes: [],
      faults: { error: 0, hang: 0, delayed: 0, dropped: 0 },
      handled: 0,
      subscriptionStarts: [],
      observed: [],
    };
  }

  /** The list procedures append to (shared with the router context). */
  get subscriptionStarts(): Array<string | null> {
    return this.data.subscriptionStarts;
  }

  /** Records one request; returns its record (with its attempt number for `callId`). */
  request(paths: readonly string[], callId: string, receivedAt: number): TrpcObservedAttempt {
    const d = this.data;
    d.requests++;
    d.calls += paths.length;
    d.batchSizes.push(paths.length);
    for (const p of paths) d.procedures[p] = (d.procedures[p] ?? 0) + 1;
    const attempt = (d.attempts[callId] ?? 0) + 1;
    d.attempts[callId] = attempt;
    const record: TrpcObservedAttempt = {
      callId,
      attempt,
      paths: paths.slice(),
      receivedAt,
      httpStatus: undefined,
      outcome: undefined,
    };
    if (d.observed.length < 10_000) d.observed.push(record);
    return record;
  }

  fault(kind: keyof ChaosTrpcStats['faults']): void {
    this.data.faults[kind]++;
  }

  handled(): void {
    this.data.handled++;
  }

  snapshot(): ChaosTrpcStats {
    const d = this.data;
    return {
      ...d,
      procedures: { ...d.procedures },
      attempts: { ...d.attempts },
      batchSizes: [...d.batchSizes],
      faults: { ...d.faults },
      subscriptionStarts: [...d.subscriptionStarts],
      observed: d.observed.map((o) => ({ ...o })),
    };
  }

  reset(): void {
    const starts = this.data.subscriptionStarts;
    this.data = TrpcRecorder.empty(this.server);
    // The router context holds this array: empty it in place.
    starts.length = 0;
    this.data.subscriptionStarts = starts;
  }
}
