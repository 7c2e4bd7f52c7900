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
    };
  }

  /** The list procedures append to (shared with the router context). */
  get subscriptionStarts(): Array<string | null> {
    return this.data.subscriptionStarts;
  }

  /** Records one request; returns its attempt number for `callId`. */
  request(paths: readonly string[], callId: string): number {
    const d = this.data;
    d.requests++;
    d.calls += paths.length;
    d.batchSizes.push(paths.length);
    for (const p of paths) d.procedures[p] = (d.procedures[p] ?? 0) + 1;
    const attempt = (d.attempts[callId] ?? 0) + 1;
    d.attempts[callId] = attempt;
    return attempt;
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
