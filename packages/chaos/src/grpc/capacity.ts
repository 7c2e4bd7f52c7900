import type { Clock, Sleep } from '@breakwater/core/time';

/**
 * A server's fixed capacity: at most `workers` calls are served at once, each
 * taking `serviceMs` of simulated work (a wait, not CPU); the rest wait in a
 * FIFO queue in front. Capacity is `workers / serviceMs` calls per ms.
 */
export interface CapacitySpec {
  /** Calls served at once, an integer >= 1. */
  workers: number;
  /** Simulated work per call in ms, > 0. */
  serviceMs: number;
  /** Most calls waiting for a worker; a call beyond it is refused with `RESOURCE_EXHAUSTED`. Defaults to no bound. */
  queue?: number;
}

/** Calls a second a server of capacity `spec` answers when saturated: `workers × 1000 / serviceMs`. */
export function capacityPerSecond(spec: CapacitySpec): number {
  return (spec.workers * 1_000) / spec.serviceMs;
}

/** What a capacity-limited server did since it started (or since the last reset). */
export interface CapacityStats {
  /** Calls a worker finished, whether or not their client was still waiting. */
  served: number;
  /**
   * Served calls whose client had already given up (cancelled, or its deadline
   * passed) by the time the work was done: work a saturated server does for nobody.
   */
  wasted: number;
  /** Calls refused because the queue was full. */
  refused: number;
  /** Calls being served now. */
  busy: number;
  /** Calls waiting for a worker now. */
  queued: number;
  /**
   * Most calls at the server at once (being served or waiting) since it started
   * or the last reset: what a client-side limit keeps bounded.
   */
  peakInFlight: number;
}

/** A FIFO queue in front of a fixed set of workers. @internal */
export interface Capacity {
  /**
   * Waits for a worker and for the call's work; `'refused'` at once when the
   * queue is full. `gaveUp` aborts when the client stops waiting: the call is
   * still served (the simulated server does not check cancellation), and counted as wasted.
   */
  serve(gaveUp: AbortSignal): Promise<'served' | 'refused'>;
  /** Replaces the spec: new workers start at once, surplus ones retire when their call is done. */
  set(spec: CapacitySpec): void;
  stats(): CapacityStats;
  reset(): void;
}

/** Validates a capacity spec, throwing an error that names the bad field. */
export function checkCapacity(spec: CapacitySpec, name = 'capacity'): CapacitySpec {
  if (typeof spec !== 'object' || spec === null) {
    throw new TypeError(`${name} must be an object, got ${String(spec)}`);
  }
  if (!(Number.isInteger(spec.workers) && spec.workers >= 1)) {
    throw new RangeError(`${name}.workers must be an integer >= 1, got ${String(spec.workers)}`);
  }
  if (
    !(typeof spec.serviceMs === 'number' && spec.serviceMs > 0 && Number.isFinite(spec.serviceMs))
  ) {
    throw new RangeError(`${name}.serviceMs must be a number > 0, got ${String(spec.serviceMs)}`);
  }
  if (
    spec.queue !== undefined &&
    !(spec.queue === Number.POSITIVE_INFINITY || (Number.isInteger(spec.queue) && spec.queue >= 0))
  ) {
    throw new RangeError(`${name}.queue must be an integer >= 0, got ${String(spec.queue)}`);
  }
  return { ...spec };
}

interface Waiting {
  arrivedAt: number;
  gaveUp: AbortSignal;
  done: (outcome: 'served') => void;
}

/**
 * Creates the queue and workers. A worker that finishes a call starts the next
 * queued one at the time the previous one was due to end (or when it arrived, if
 * later), not when its timer fired: under saturation each worker completes
 * exactly one call per `serviceMs`, so capacity is what the spec says. @internal
 */
export function createCapacity(initial: CapacitySpec, clock: Clock, sleep: Sleep): Capacity {
  let spec = checkCapacity(initial);
  const queue: Waiting[] = [];
  let busy = 0;
  let counts = { served: 0, wasted: 0, refused: 0, peakInFlight: 0 };

  /** One worker: serves `first`, then queued calls back to back, until the queue is empty. */
  async function worker(first: Waiting, startAt: number): Promise<void> {
    let call = first;
    let start = startAt;
    for (;;) {
      const end = start + spec.serviceMs;
      const wait = end - clock();
      if (wait > 0) await sleep(wait);
      counts.served += 1;
      if (call.gaveUp.aborted) counts.wasted += 1;
      call.done('served');
      // A worker beyond the current spec (capacity shrank) retires.
      const next = busy <= spec.workers ? queue.shift() : undefined;
      if (next === undefined) break;
      call = next;
      start = Math.max(end, next.arrivedAt);
    }
    busy -= 1;
  }

  function startWorkers(): void {
    while (queue.length > 0 && busy < spec.workers) {
      busy += 1;
      void worker(queue.shift() as Waiting, clock());
    }
  }

  return {
    serve(gaveUp) {
      if (busy >= spec.workers && queue.length >= (spec.queue ?? Number.POSITIVE_INFINITY)) {
        counts.refused += 1;
        return Promise.resolve('refused');
      }
      return new Promise((done) => {
        queue.push({ arrivedAt: clock(), gaveUp, done });
        startWorkers();
        counts.peakInFlight = Math.max(counts.peakInFlight, busy + queue.length);
      });
    },
    set(next) {
      spec = checkCapacity(next);
      startWorkers();
    },
    stats: () => ({ ...counts, busy, queued: queue.length }),
    reset() {
      counts = { served: 0, wasted: 0, refused: 0, peakInFlight: busy + queue.length };
    },
  };
}

/** A server's capacity that can be set, changed or removed while it runs. @internal */
export interface CapacitySetting {
  /** The capacity calls arriving now wait in, or `undefined` for none. */
  readonly current: Capacity | undefined;
  /** `undefined`: unlimited from now on (calls already queued are still served). */
  set(spec: CapacitySpec | undefined): void;
  /** All zero without a capacity. */
  stats(): CapacityStats;
  reset(): void;
}

/** The capacity setting both chaos servers (gRPC, tRPC) share. @internal */
export function capacitySetting(
  initial: CapacitySpec | undefined,
  clock: Clock,
  sleep: Sleep,
): CapacitySetting {
  let capacity = initial === undefined ? undefined : createCapacity(initial, clock, sleep);
  return {
    get current() {
      return capacity;
    },
    set(spec) {
      if (spec === undefined) capacity = undefined;
      else if (capacity === undefined) capacity = createCapacity(spec, clock, sleep);
      else capacity.set(spec);
    },
    stats: () =>
      capacity?.stats() ?? {
        served: 0,
        wasted: 0,
        refused: 0,
        busy: 0,
        queued: 0,
        peakInFlight: 0,
      },
    reset: () => capacity?.reset(),
  };
}
