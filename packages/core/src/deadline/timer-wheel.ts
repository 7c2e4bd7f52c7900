import { DeadlineTimerError } from '../errors/deadline-timer-error.js';
import { monotonicClock } from '../time/clock.js';
import { type Sleep, systemSleep } from '../time/sleep.js';
import { afterTurn, keepAlive, startTimer, stopTimer, type TimerHandle } from '../time/timer.js';

/**
 * A call waiting on a {@link TimerWheel}. The entry is its own list node, so
 * scheduling and cancelling allocate nothing.
 * @internal
 */
export abstract class WheelEntry {
  wheelSlot: Slot | undefined = undefined;
  wheelPrev: WheelEntry | undefined = undefined;
  wheelNext: WheelEntry | undefined = undefined;
  /**
   * The deadline passed while the call was pending (`timerError` undefined), or
   * the wheel's injected sleep failed (`timerError` is a `DeadlineTimerError`):
   * settle the call.
   */
  abstract expire(timerError: Error | undefined): unknown;
}

/** Every entry due at the same tick. @internal */
class Slot {
  head: WheelEntry | undefined = undefined;
  tail: WheelEntry | undefined = undefined;
  /** Off the heap: new entries for this tick need a new slot. */
  retired = false;
  constructor(readonly tick: number) {}
}

/** Options of a {@link TimerWheel}. @internal */
export interface TimerWheelOptions {
  /** Time in ms. Defaults to `performance.now()` (monotonic) on the host timer, required with `sleep`. */
  now?: () => number;
  /** Waits through this instead of the host timer (a manual clock in tests). Defaults to the host timer. */
  sleep?: Sleep;
}

/**
 * The one per-attempt deadline structure of the core (`withTimeout`,
 * `protect`, the router's attempts). Entries are grouped by the tick they fall
 * due (a slot); a min-heap of slots finds the earliest, and only that one is
 * armed.
 *
 * On the host timer (the process-wide {@link sharedTimerWheel}) time is
 * `performance.now()`, a deadline is rounded up to its grain ({@link grainOf}:
 * the millisecond below 256 ms, at most 1/128 of the timeout above), one
 * timer covers every deadline, and slots emptied by winning calls stay until
 * the timer reaches them, so back-to-back calls never arm or clear a host
 * timer of their own. The timer holds the process open while any entry is
 * pending (a pending deadline is foreground work) and is `unref`'d once none
 * is at the end of an event-loop turn: back-to-back calls (the count going
 * 1→0→1 within a turn) never touch it, and at most one check runs per turn.
 *
 * With an injected `sleep` (and its clock as `now`) ticks are exact, one sleep
 * covers every deadline, and it is cancelled as soon as the wheel empties, so
 * no virtual timer outlives the last call. A resolved sleep is authoritative:
 * the armed tick is due even if the clock lags. A sleep that throws or rejects
 * fails every pending entry with a `DeadlineTimerError` (a deadline that
 * cannot be enforced is not reported as passed).
 * @internal
 */
export class TimerWheel {
  private readonly heap: Slot[] = [];
  private readonly byTick = new Map<number, Slot>();
  private last: Slot | undefined = undefined;
  private pending = 0;
  private handle: TimerHandle | undefined = undefined;
  /** Whether `handle` holds the process open (true while an entry is pending, and until the turn it empties ends). */
  private held = false;
  /** A check that lets go of the process is queued for the end of this turn. */
  private releasing = false;
  private readonly release = (): void => {
    this.releasing = false;
    if (this.pending > 0 || !this.held) return;
    this.held = false;
    if (this.handle !== undefined) keepAlive(this.handle, false);
  };
  private sleepCancel: AbortController | undefined = undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  /** The last host-timer timeout scheduled, and its grain (see {@link grainOf}). */
  private grainFor = 0;
  private grain = 1;
  /** The wheel's clock (callers compare it with theirs to share a reading). */
  readonly now: () => number;
  private readonly sleep: Sleep | undefined;
  private readonly onTimer = (): void => this.fire(Number.NEGATIVE_INFINITY);

  constructor(options: TimerWheelOptions = {}) {
    this.sleep = options.sleep;
    this.now = options.now ?? monotonicClock;
  }

  /**
   * Schedules `entry` (not scheduled) to expire `timeoutMs` (finite, >= 0)
   * from now. Throws `RangeError` for any other timeout (or a non-finite
   * clock reading): one NaN or Infinity at the head of the heap would stop
   * every deadline of the process. Returns the time it read (on the wheel's
   * clock), so a caller that needs the start of its deadline reads no clock
   * of its own; a caller that just read the wheel's clock passes that
   * reading as `now` (defaults to a new reading).
   */
  schedule(entry: WheelEntry, timeoutMs: number, now: number = this.now()): number {
    let tick = now + timeoutMs;
    if (!(timeoutMs >= 0 && tick - now < Number.POSITIVE_INFINITY)) {
      throw new RangeError(
        `a deadline must be a finite number of ms >= 0 from a finite time, got ${timeoutMs} ms from ${now}`,
      );
    }
    if (this.sleep === undefined) {
      if (timeoutMs !== this.grainFor) {
        this.grainFor = timeoutMs;
        this.grain = grainOf(timeoutMs);
      }
      tick = Math.ceil(tick / this.grain) * this.grain;
    }
    let slot = this.last;
    if (slot === undefined || slot.tick !== tick || slot.retired) {
      slot = this.byTick.get(tick);
      if (slot === undefined) {
        slot = new Slot(tick);
        this.byTick.set(tick, slot);
        this.push(slot);
        if (tick < this.armedAt) this.arm(tick, now);
      }
      this.last = slot;
    }
    if (this.pending++ === 0 && !this.held && this.handle !== undefined) {
      keepAlive(this.handle, true);
      this.held = true;
    }
    entry.wheelSlot = slot;
    entry.wheelPrev = slot.tail;
    if (slot.tail === undefined) slot.head = entry;
    else slot.tail.wheelNext = entry;
    slot.tail = entry;
    return now;
  }

  /** The current time on the wheel's clock. */
  time(): number {
    return this.now();
  }

  /** Removes `entry` if it is scheduled. */
  cancel(entry: WheelEntry): void {
    const slot = entry.wheelSlot;
    if (slot === undefined) return;
    const { wheelPrev: prev, wheelNext: next } = entry;
    if (prev === undefined) slot.head = next;
    else prev.wheelNext = next;
    if (next === undefined) slot.tail = prev;
    else next.wheelPrev = prev;
    entry.wheelSlot = entry.wheelPrev = entry.wheelNext = undefined;
    if (--this.pending === 0) this.idle();
  }

  /** Pending entries. */
  get size(): number {
    return this.pending;
  }

  /** Expires every slot due at `due` or earlier (or at the current time, if later), then re-arms. */
  private fire(due: number): void {
    this.handle = undefined;
    this.held = false;
    // A check queued on a host whose immediates were dropped (fake timers) must not block the next one.
    this.releasing = false;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = Math.max(this.now(), due);
    for (let top = this.heap[0]; top !== undefined && top.tick <= now; top = this.heap[0]) {
      this.pop();
      this.expire(top, undefined);
    }
    this.rearm(now);
  }

  private expire(slot: Slot, timerError: Error | undefined): void {
    for (let e = slot.head; e !== undefined; ) {
      const next = e.wheelNext;
      e.wheelSlot = e.wheelPrev = e.wheelNext = undefined;
      this.pending--;
      e.expire(timerError);
      e = next;
    }
    slot.head = slot.tail = undefined;
  }

  /** The last pending entry left. */
  private idle(): void {
    // A virtual sleep must not outlive the last call; the host timer is cheaper left armed,
    // but no longer holds the process open once this turn is over. Toggling the hold per
    // call would cost two native calls each at concurrency 1.
    if (this.sleep !== undefined) this.clear();
    else if (this.held && !this.releasing) {
      this.releasing = true;
      afterTurn(this.release);
    }
  }

  /** Drops emptied slots from the top, then arms the timer for the earliest live one. */
  private rearm(now: number): void {
    for (let top = this.heap[0]; top !== undefined && top.head === undefined; top = this.heap[0]) {
      this.pop();
    }
    const top = this.heap[0];
    if (top !== undefined) this.arm(top.tick, now);
  }

  private arm(tick: number, now: number): void {
    this.armedAt = tick;
    const sleep = this.sleep;
    if (sleep === undefined) {
      stopTimer(this.handle);
      // Armed only for a slot with a pending entry (or one being scheduled): it holds the process.
      this.handle = startTimer(Math.max(1, Math.ceil(tick - now)), this.onTimer);
      this.held = true;
      return;
    }
    this.sleepCancel?.abort();
    const cancel = new AbortController();
    this.sleepCancel = cancel;
    let waiting: Promise<void>;
    try {
      waiting = Promise.resolve(sleep(Math.max(0, tick - now), cancel.signal));
    } catch (error) {
      waiting = Promise.reject(error);
    }
    waiting.then(
      () => {
        if (this.sleepCancel !== cancel) return;
        this.sleepCancel = undefined;
        this.fire(tick);
      },
      (error: unknown) => {
        if (this.sleepCancel !== cancel) return;
        this.sleepCancel = undefined;
        this.failAll(new DeadlineTimerError(error));
      },
    );
  }

  /** The deadlines cannot be enforced: every pending entry learns it at once. */
  private failAll(error: DeadlineTimerError): void {
    this.armedAt = Number.POSITIVE_INFINITY;
    for (let top = this.heap[0]; top !== undefined; top = this.heap[0]) {
      this.pop();
      this.expire(top, error);
    }
  }

  /** Forgets the (all empty) slots and cancels the pending sleep. */
  private clear(): void {
    for (const slot of this.heap) slot.retired = true;
    this.heap.length = 0;
    this.byTick.clear();
    this.last = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const cancel = this.sleepCancel;
    this.sleepCancel = undefined;
    cancel?.abort();
  }

  private push(slot: Slot): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(slot);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Slot;
      if (p.tick <= slot.tick) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = slot;
  }

  private pop(): void {
    const heap = this.heap;
    const top = heap[0] as Slot;
    top.retired = true;
    this.byTick.delete(top.tick);
    const last = heap.pop() as Slot;
    if (heap.length === 0) return;
    let i = 0;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && (heap[r] as Slot).tick < (heap[l] as Slot).tick ? r : l;
      const c = heap[child] as Slot;
      if (c.tick >= last.tick) break;
      heap[i] = c;
      i = child;
    }
    heap[i] = last;
  }
}

/**
 * Tick size in ms of a host-timer deadline `timeoutMs` away: 1 ms below
 * 256 ms, else the largest power of two at most `timeoutMs / 128`. A deadline
 * is rounded up to its grain, so it fires at most 1/128 of its timeout late
 * (a 10 s deadline up to 64 ms), and calls started within one grain of each
 * other share a slot: at concurrency 1 a 10 s timeout opens a slot every
 * 64 ms instead of one per call, so the wheel holds about 160 slots instead
 * of one per millisecond of the last 10 s.
 * @internal
 */
export function grainOf(timeoutMs: number): number {
  return timeoutMs < 256 ? 1 : 2 ** Math.floor(Math.log2(timeoutMs / 128));
}

/** The process-wide wheel on the host timer, behind every default per-attempt timeout. @internal */
export const sharedTimerWheel = new TimerWheel();

/** The wheel for deadlines waited out through `sleep`: the shared host wheel, or a new one driven by `sleep` and `now`. @internal */
export function timerWheelFor(sleep: Sleep | undefined, now: () => number): TimerWheel {
  return sleep === undefined || sleep === systemSleep
    ? sharedTimerWheel
    : new TimerWheel({ now, sleep });
}
