import type { Clock } from './clock.js';
import type { Sleep } from './sleep.js';

interface Sleeper {
  at: number;
  seq: number;
  resolve: () => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * A {@link Clock} that only moves when told to, with a virtual {@link Sleep}
 * bound to it. Lets a whole retry chain with backoff run deterministically in a
 * test, without fake timers.
 */
export interface ManualClock extends Clock {
  /** The current virtual time in ms. */
  readonly now: number;
  /** Number of virtual sleeps still waiting. */
  readonly pending: number;
  /** A sleep that resolves when the clock is advanced past its deadline, or on abort. */
  readonly sleep: Sleep;
  /**
   * Moves time forward by `ms`, resolving every sleep that falls due, in order.
   * Synchronous: continuations run after the caller yields.
   */
  advance(ms: number): void;
  /** Sets the clock to an absolute time; may move backwards (sleeps never fire backwards). */
  set(ms: number): void;
  /**
   * Moves time forward by `ms` one due sleep at a time, letting promise chains
   * run between steps, so a sleep registered by a continuation also fires if due.
   */
  advanceAsync(ms: number): Promise<void>;
  /** Lets pending promise continuations and immediates run. */
  flush(): Promise<void>;
  /**
   * Drives time forward, jumping from one due sleep to the next, until
   * `promise` settles; returns its outcome. Throws if it cannot settle
   * because nothing is left to wait for.
   */
  run<T>(
    promise: Promise<T>,
    options?: {
      /** Most sleeps to fire before giving up with an error. Defaults to 100 000. */
      maxSteps?: number;
    },
  ): Promise<T>;
}

function tickImmediate(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Creates a manual clock starting at `startMs` (default 0).
 * @example
 * const clock = createManualClock();
 * const result = await clock.run(withRetry(op, { sleep: clock.sleep, clock }));
 */
export function createManualClock(startMs = 0): ManualClock {
  if (typeof startMs !== 'number' || !Number.isFinite(startMs)) {
    throw new RangeError(
      `createManualClock(startMs) must be a finite number, got ${String(startMs)}`,
    );
  }
  let now = startMs;
  let seq = 0;
  const sleepers: Sleeper[] = [];

  const remove = (s: Sleeper) => {
    const i = sleepers.indexOf(s);
    if (i >= 0) sleepers.splice(i, 1);
    if (s.onAbort && s.signal) s.signal.removeEventListener('abort', s.onAbort);
  };

  const nextDue = (limit: number): Sleeper | undefined => {
    let best: Sleeper | undefined;
    for (const s of sleepers) {
      if (s.at <= limit && (!best || s.at < best.at || (s.at === best.at && s.seq < best.seq))) {
        best = s;
      }
    }
    return best;
  };

  const fire = (s: Sleeper) => {
    remove(s);
    s.resolve();
  };

  const sleep: Sleep = (ms, signal) => {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const s: Sleeper = {
        at: now + Math.max(0, Number.isFinite(ms) ? ms : 0),
        seq: seq++,
        resolve,
        signal,
        onAbort: undefined,
      };
      if (signal) {
        s.onAbort = () => fire(s);
        signal.addEventListener('abort', s.onAbort, { once: true });
      }
      sleepers.push(s);
    });
  };

  const flush = async () => {
    for (let i = 0; i < 5; i++) await tickImmediate();
  };

  const clock = (() => now) as ManualClock;
  Object.defineProperties(clock, {
    now: { get: () => now },
    pending: { get: () => sleepers.length },
  });
  Object.assign(clock, {
    sleep,
    flush,
    advance(ms: number) {
      const target = now + ms;
      for (let s = nextDue(target); s; s = nextDue(target)) {
        now = Math.max(now, s.at);
        fire(s);
      }
      now = target;
    },
    set(ms: number) {
      now = ms;
      for (let s = nextDue(now); s; s = nextDue(now)) fire(s);
    },
    async advanceAsync(ms: number) {
      const target = now + ms;
      await flush();
      for (let s = nextDue(target); s; s = nextDue(target)) {
        now = Math.max(now, s.at);
        fire(s);
        await flush();
      }
      now = target;
      await flush();
    },
    async run<T>(promise: Promise<T>, options?: { maxSteps?: number }): Promise<T> {
      let settled = false;
      const tracked = promise.then(
        (v) => {
          settled = true;
          return v;
        },
        (e: unknown) => {
          settled = true;
          throw e;
        },
      );
      // Prevent an unhandled rejection while we drive time; the caller awaits `tracked`.
      tracked.catch(() => {});
      const maxSteps = options?.maxSteps ?? 100_000;
      for (let step = 0; step < maxSteps; step++) {
        await flush();
        if (settled) return tracked;
        const s = nextDue(Number.POSITIVE_INFINITY);
        if (!s) {
          await flush();
          if (settled) return tracked;
          throw new Error('ManualClock.run: the promise is not settled and no sleep is pending');
        }
        now = Math.max(now, s.at);
        fire(s);
      }
      throw new Error(`ManualClock.run: not settled after ${maxSteps} steps`);
    },
  });
  return clock;
}
