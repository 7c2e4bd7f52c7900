import { QueueFullError } from '../errors/queue-full-error.js';
import { abortError, neverAbortedSignal } from '../internal/abort.js';
import { checkCall } from '../internal/call-options.js';
import { EventEmitter, type Subscribe } from '../internal/events.js';
import { onAbort } from '../internal/on-abort.js';
import { checkNumber, checkOptions, keysOf, optionalNumber } from '../internal/validate.js';
import { LinkedList } from './linked-list.js';

/** Work run by a {@link Pool}; receives the caller's signal, or a never-aborted one. */
export type PoolTask<T> = (signal: AbortSignal) => T | PromiseLike<T>;

/** Per-call options of {@link Pool.run}. */
export interface PoolRunOptions {
  /** Cancels the call: before it starts it never runs; while queued it leaves the queue at once. Defaults to none. */
  signal?: AbortSignal | undefined;
}

/** Options of {@link createPool}. */
export interface PoolOptions {
  /** Most tasks running at once, an integer >= 1 or `Infinity`. Required. */
  concurrency: number;
  /** Most tasks waiting for a slot (0 = no queue). Defaults to `Infinity`. */
  maxQueue?: number;
}

/** Keys of {@link PoolOptions}. @internal */
export const POOL_KEYS = keysOf<PoolOptions>()(['concurrency', 'maxQueue']);

/** Counters of a {@link Pool}, since it was created. */
export interface PoolStats {
  /** Tasks running now. */
  active: number;
  /** Tasks waiting for a slot now. */
  queued: number;
  /** Tasks that were started. */
  started: number;
  /** Started tasks that fulfilled. */
  completed: number;
  /** Started tasks that threw or rejected. */
  failed: number;
  /** Calls refused without running: `queueFull + aborted`. */
  rejected: number;
  /** Calls refused with `QueueFullError`. */
  queueFull: number;
  /** Calls whose signal aborted before their task started (already aborted, or while queued). */
  aborted: number;
}

/** Emitted when a call is refused because every slot is busy and the queue is full. */
export interface PoolQueueFullEvent {
  /** Tasks running when the call was refused. */
  active: number;
  /** Tasks queued when the call was refused. */
  queued: number;
  /** The queue bound. */
  maxQueue: number;
}

/** A concurrency limiter with a bounded FIFO wait queue. */
export interface Pool {
  /**
   * Runs `task` when a slot is free, FIFO. Rejects with `QueueFullError`
   * (task not run) when the queue is full, and with the abort error when
   * `signal` aborts before the task starts. A started task keeps its slot until it settles.
   * A `task` that is not a function or an invalid `signal` throws `TypeError` synchronously, before queueing.
   */
  run<T>(task: PoolTask<T>, options?: PoolRunOptions): Promise<T>;
  /** Resolves when no task is running or queued (at once if already so). */
  onIdle(): Promise<void>;
  /** Subscribes to queue-full refusals. */
  readonly onQueueFull: Subscribe<PoolQueueFullEvent>;
  /** Tasks running now. */
  readonly active: number;
  /** Tasks waiting for a slot now. */
  readonly queued: number;
  /** The configured concurrency. */
  readonly concurrency: number;
  /** The configured queue bound. */
  readonly maxQueue: number;
  /** A snapshot of the counters. */
  stats(): PoolStats;
  /**
   * Low-level hand-off for callback-style callers (framework interceptors and
   * links) that cannot wrap their work in `run`: takes a free slot, counted as
   * a started task, and returns true; returns false when every slot is busy
   * (then use `run` to queue). A taken slot must be given back exactly once.
   */
  tryTake(): boolean;
  /** Gives back a slot taken with {@link Pool.tryTake}; `ok` tells whether its work succeeded. Starts the oldest waiter. */
  give(ok: boolean): void;
}

/**
 * A {@link Pool} with shared give-back callbacks for the core's own runners
 * (`protect`, the router), which hand them to `promise.then` without a closure.
 * @internal
 */
export interface SlotPool extends Pool {
  /** `give(true)` as a shared callback (for `promise.then`). */
  readonly giveOk: () => void;
  /** `give(false)` as a shared callback, for `settled.then(giveOk, giveFailed)` beside the promise the caller keeps. */
  readonly giveFailed: () => void;
}

/** A waiting call: a list node, so an abort unlinks it in O(1). */
interface Waiter {
  task: PoolTask<unknown>;
  signal: AbortSignal | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Stops waiting on the caller's signal. */
  stopWaiting: (() => void) | undefined;
  prev: Waiter | undefined;
  next: Waiter | undefined;
}

class PoolImpl implements SlotPool {
  active = 0;
  queued = 0;
  private readonly waiters = new LinkedList<Waiter>();
  private started = 0;
  private completed = 0;
  private failed = 0;
  private queueFull = 0;
  private aborted = 0;
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Inside {@link drain}: a slot freed meanwhile (a task that threw synchronously) is refilled by its loop. */
  private draining = false;
  private readonly queueFullEvents = new EventEmitter<PoolQueueFullEvent>();
  readonly onQueueFull = this.queueFullEvents.on;

  constructor(
    readonly concurrency: number,
    readonly maxQueue: number,
  ) {}

  run<T>(task: PoolTask<T>, options?: PoolRunOptions): Promise<T> {
    checkCall('pool.run', 'task', task, options);
    const signal = options?.signal;
    if (signal?.aborted) {
      this.aborted++;
      return Promise.reject(abortError(signal));
    }
    // Fast path: a free slot costs no queue entry and no listener.
    if (this.active < this.concurrency) {
      this.active++;
      return this.execute(task, signal ?? neverAbortedSignal);
    }
    if (this.queued >= this.maxQueue) {
      this.queueFull++;
      if (this.queueFullEvents.active) {
        this.queueFullEvents.emit({
          active: this.active,
          queued: this.queued,
          maxQueue: this.maxQueue,
        });
      }
      return Promise.reject(new QueueFullError(this.maxQueue));
    }
    return new Promise<T>((resolve, reject) => {
      const w: Waiter = {
        task: task as PoolTask<unknown>,
        signal,
        resolve: resolve as (value: unknown) => void,
        reject,
        stopWaiting: undefined,
        prev: undefined,
        next: undefined,
      };
      this.waiters.append(w);
      this.queued++;
      if (signal) {
        w.stopWaiting = onAbort(signal, () => {
          this.unlink(w);
          this.aborted++;
          reject(abortError(signal));
          this.checkIdle();
        });
      }
    });
  }

  tryTake(): boolean {
    // A free slot means the queue is empty: slots are handed to waiters as soon as they free up.
    if (this.active >= this.concurrency) return false;
    this.active++;
    this.started++;
    return true;
  }

  give(ok: boolean): void {
    if (ok) this.completed++;
    else this.failed++;
    this.release();
  }

  readonly giveOk = (): void => this.give(true);
  readonly giveFailed = (): void => this.give(false);

  /**
   * Starts `task` in a slot already counted in `active`. Settlement goes
   * through two shared callbacks rather than an async function: measured
   * cheaper, and nothing is allocated per call beyond the returned promise.
   */
  private execute<T>(task: PoolTask<T>, signal: AbortSignal): Promise<T> {
    this.started++;
    let result: T | PromiseLike<T>;
    try {
      result = task(signal);
    } catch (e) {
      this.failed++;
      this.release();
      return Promise.reject(e);
    }
    return Promise.resolve(result).then(this.onFulfilled, this.onRejected) as Promise<T>;
  }

  private readonly onFulfilled = (value: unknown): unknown => {
    this.completed++;
    this.release();
    return value;
  };

  private readonly onRejected = (error: unknown): never => {
    this.failed++;
    this.release();
    throw error;
  };

  /** Frees a slot and hands it to the oldest waiter, if any. */
  private release(): void {
    this.active--;
    // Not recursively: thousands of queued tasks that throw synchronously would overflow the stack.
    if (!this.draining) this.drain();
  }

  private unlink(w: Waiter): void {
    this.waiters.unlink(w);
    this.queued--;
    w.stopWaiting?.();
  }

  /** Starts queued tasks while slots are free, oldest first. */
  private drain(): void {
    this.draining = true;
    try {
      while (this.waiters.head !== undefined && this.active < this.concurrency) {
        const w = this.waiters.head;
        this.unlink(w);
        this.active++;
        this.execute(w.task, w.signal ?? neverAbortedSignal).then(w.resolve, w.reject);
      }
    } finally {
      this.draining = false;
    }
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.idle !== undefined && this.active === 0 && this.queued === 0) {
      const { resolve } = this.idle;
      this.idle = undefined;
      resolve();
    }
  }

  onIdle(): Promise<void> {
    if (this.active === 0 && this.queued === 0) return Promise.resolve();
    if (this.idle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.idle = { promise, resolve };
    }
    return this.idle.promise;
  }

  stats(): PoolStats {
    return {
      active: this.active,
      queued: this.queued,
      started: this.started,
      completed: this.completed,
      failed: this.failed,
      rejected: this.queueFull + this.aborted,
      queueFull: this.queueFull,
      aborted: this.aborted,
    };
  }
}

/**
 * Creates a pool that runs at most `concurrency` tasks at once and queues the
 * rest FIFO, up to `maxQueue`. It owns no timers; queued calls cost one list
 * node and, when they carry a signal, one abort listener removed when they leave.
 * @example
 * const pool = createPool({ concurrency: 4, maxQueue: 100 });
 * const user = await pool.run((signal) => fetchUser(id, { signal }), { signal });
 */
export function createPool(options: PoolOptions): Pool {
  return createSlotPool(options);
}

/** {@link createPool} with the internal slot hand-off of {@link SlotPool}. @internal */
export function createSlotPool(options: PoolOptions): SlotPool {
  checkOptions('createPool', options, POOL_KEYS, '', false);
  const concurrency = checkNumber('concurrency', options.concurrency, {
    min: 1,
    integer: true,
    allowInfinity: true,
  });
  const maxQueue = optionalNumber('maxQueue', options.maxQueue, Number.POSITIVE_INFINITY, {
    min: 0,
    integer: true,
    allowInfinity: true,
  });
  return new PoolImpl(concurrency, maxQueue);
}
