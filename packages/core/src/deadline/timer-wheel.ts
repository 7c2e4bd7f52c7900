import { startTimer, stopTimer, type TimerHandle } from '../time/timer.js';

/**
 * A call waiting on the shared deadline timer. The entry is its own list
 * node, so scheduling and cancelling allocate nothing.
 * @internal
 */
export abstract class WheelEntry {
  wheelSlot: Slot | undefined = undefined;
  wheelPrev: WheelEntry | undefined = undefined;
  wheelNext: WheelEntry | undefined = undefined;
  /** The deadline passed while the call was pending: settle it; return the error it rejected with. */
  abstract expire(): Error;
}

/** Every entry due in the same millisecond. @internal */
class Slot {
  head: WheelEntry | undefined = undefined;
  tail: WheelEntry | undefined = undefined;
  /** Shared by the slot's ops that need a signal but have no caller signal; created on first use. */
  controller: AbortController | undefined = undefined;
  /** Off the heap: new entries for this tick need a new slot. */
  retired = false;
  constructor(readonly tick: number) {}
}

/** The host timer's limit; a longer wait is armed in steps. */
const MAX_ARM_MS = 2_147_483_647;

/**
 * One unref'd host timer for every pending `withTimeout` deadline. Entries
 * are grouped by the millisecond they fall due (a slot); a min-heap of slots
 * finds the earliest, and only that one is armed. Slots emptied by winning
 * calls stay until the timer reaches them (or are dropped when re-arming),
 * so back-to-back calls never arm or clear a host timer of their own.
 *
 * Time is `performance.now()`, monotonic, so a wall-clock jump can neither
 * fire deadlines early nor hold them back.
 * @internal
 */
export class TimerWheel {
  private readonly heap: Slot[] = [];
  private readonly byTick = new Map<number, Slot>();
  private last: Slot | undefined = undefined;
  private handle: TimerHandle | undefined = undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private readonly onTimer = (): void => this.fire();

  /** @param now Monotonic ms; injectable so tests can pin entries to one slot. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Schedules `entry` to expire `timeoutMs` (finite, > 0) from now. */
  schedule(entry: WheelEntry, timeoutMs: number): void {
    const now = this.now();
    const tick = Math.ceil(now + timeoutMs);
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
    entry.wheelSlot = slot;
    entry.wheelPrev = slot.tail;
    if (slot.tail === undefined) slot.head = entry;
    else slot.tail.wheelNext = entry;
    slot.tail = entry;
  }

  /** A signal shared by the slot of `entry` (scheduled); it aborts only if a member is still pending when the slot falls due. */
  sharedSignal(entry: WheelEntry): AbortSignal {
    const slot = entry.wheelSlot as Slot;
    slot.controller ??= new AbortController();
    return slot.controller.signal;
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
  }

  /** Pending entries, for tests. */
  get size(): number {
    let n = 0;
    for (const slot of this.heap) for (let e = slot.head; e; e = e.wheelNext) n++;
    return n;
  }

  private fire(): void {
    this.handle = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    for (let top = this.heap[0]; top !== undefined && top.tick <= now; top = this.heap[0]) {
      this.pop();
      this.expire(top);
    }
    this.rearm(now);
  }

  private expire(slot: Slot): void {
    let reason: Error | undefined;
    for (let e = slot.head; e !== undefined; ) {
      const next = e.wheelNext;
      e.wheelSlot = e.wheelPrev = e.wheelNext = undefined;
      const error = e.expire();
      reason ??= error;
      e = next;
    }
    slot.head = slot.tail = undefined;
    // Abort the shared signal only when a member actually timed out; winners keep a quiet signal.
    if (reason !== undefined) slot.controller?.abort(reason);
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
    if (this.handle !== undefined) stopTimer(this.handle);
    this.armedAt = tick;
    const ms = Math.min(Math.max(1, Math.ceil(tick - now)), MAX_ARM_MS);
    this.handle = startTimer(ms, this.onTimer, true);
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

/** The process-wide wheel behind `withTimeout`'s default timer. @internal */
export const sharedTimerWheel = new TimerWheel();
