import { type Clock, type Sleep, systemClock, systemSleep } from '@breakwater/core/time';
import { checkCallable, checkRange } from './check.js';

/** One request the generator starts. */
export interface OpenLoopRequest {
  /** Position in the schedule, from 0. */
  index: number;
  /** When the schedule wanted it to start (epoch ms). */
  scheduledAt: number;
  /** When it actually started (epoch ms); later than `scheduledAt` only if the process was busy. */
  startedAt: number;
}

/** Options of {@link runOpenLoop}. */
export interface OpenLoopOptions {
  /** Requests started per second. Required; > 0. */
  rate: number;
  /** How long requests keep being started, in ms. Required; >= 0. */
  durationMs: number;
  /** Most requests started in total. Defaults to `ceil(rate × durationMs / 1000)`. */
  maxRequests?: number;
  /** Starts one request. Never awaited before the next one starts; a rejection counts as settled. */
  send: (request: OpenLoopRequest) => unknown;
  /** Stops starting requests (in-flight ones are still awaited). Defaults to none. */
  signal?: AbortSignal;
  /** After the last start, wait at most this long (ms) for in-flight requests. Defaults to `Infinity`. */
  drainTimeoutMs?: number;
  /** Time source. Defaults to `systemClock`. */
  clock?: Clock;
  /** Waits between starts. Defaults to `systemSleep`. */
  sleep?: Sleep;
}

/** What {@link runOpenLoop} did. */
export interface OpenLoopResult {
  /** Requests started. */
  started: number;
  /** Requests settled before the generator returned. */
  settled: number;
  /** Most requests in flight at once. */
  maxInFlight: number;
  /** Largest delay between a request's scheduled and actual start, in ms. */
  maxLagMs: number;
  /** When the schedule began (epoch ms). */
  startedAt: number;
  /** When the generator returned (epoch ms). */
  endedAt: number;
}

/**
 * An open-loop load generator: request `i` starts at `start + i × 1000 / rate`
 * whether or not earlier requests have finished, so a slow server never slows
 * the offered load (a closed loop would hide exactly the latency it should
 * measure). If the process falls behind, overdue requests start at once.
 * Resolves when the schedule is done and in-flight requests have settled (or
 * `drainTimeoutMs` passed).
 * @example
 * await runOpenLoop({ rate: 50, durationMs: 10_000, send: ({ index }) => client.call(index) });
 */
export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const rate = checkRange('rate', options.rate, Number.MIN_VALUE);
  const durationMs = checkRange('durationMs', options.durationMs, 0);
  const total =
    options.maxRequests === undefined
      ? Math.ceil((rate * durationMs) / 1000)
      : checkRange('maxRequests', options.maxRequests, 0);
  checkCallable('send', options.send);
  const drainTimeoutMs =
    options.drainTimeoutMs === undefined
      ? Infinity
      : checkRange('drainTimeoutMs', options.drainTimeoutMs, 0);
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const signal = options.signal;
  const interval = 1000 / rate;
  const start = clock();
  const inFlight = new Set<Promise<void>>();
  let started = 0;
  let settled = 0;
  let maxInFlight = 0;
  let maxLagMs = 0;

  for (let index = 0; index < total; index++) {
    const scheduledAt = start + index * interval;
    if (scheduledAt >= start + durationMs && index > 0) break;
    const wait = scheduledAt - clock();
    if (wait > 0) await sleep(wait, signal);
    if (signal?.aborted) break;
    const startedAt = clock();
    maxLagMs = Math.max(maxLagMs, startedAt - scheduledAt);
    started++;
    // Any synchronous throw or rejection of `send` settles the request; nothing escapes unhandled.
    const tracked = Promise.resolve()
      .then(() => options.send({ index, scheduledAt, startedAt }))
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        settled++;
        inFlight.delete(tracked);
      });
    inFlight.add(tracked);
    maxInFlight = Math.max(maxInFlight, inFlight.size);
  }

  if (inFlight.size > 0) {
    const all = Promise.all(inFlight).then(() => undefined);
    if (drainTimeoutMs === Infinity) await all;
    else {
      const stop = new AbortController();
      await Promise.race([all, sleep(drainTimeoutMs, stop.signal)]);
      stop.abort();
    }
  }
  return { started, settled, maxInFlight, maxLagMs, startedAt: start, endedAt: clock() };
}
