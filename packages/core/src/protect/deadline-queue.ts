import { DeadlineTimerError } from '../errors/deadline-timer-error.js';
import type { Clock } from '../time/clock.js';
import type { Sleep } from '../time/sleep.js';

/**
 * Something with a deadline: a node of the queue's intrusive list, so adding
 * and removing allocate nothing.
 * @internal
 */
export interface DeadlineEntry {
  deadlineAt: number;
  deadlinePrev: DeadlineEntry | undefined;
  deadlineNext: DeadlineEntry | undefined;
  inDeadlineQueue: boolean;
  /** Called once when the deadline passes, or with a `DeadlineTimerError` when the sleep failed. */
  onDeadline(timerError: Error | undefined): void;
}

/**
 * The deadlines of a runner with an injected `sleep` (a test's manual clock):
 * one sleep covers every pending attempt. Entries are kept sorted (appending is
 * O(1) because a runner's deadlines arrive in order); only the earliest is
 * armed, and the sleep is cancelled as soon as the queue empties, so no sleep
 * is left pending after the last call settles. Runners on the host timer use
 * the process-wide `TimerWheel` of `deadline/` instead.
 * @internal
 */
export class DeadlineQueue {
  private head: DeadlineEntry | undefined;
  private tail: DeadlineEntry | undefined;
  /** Deadline the timer is armed for; `Infinity` when unarmed. */
  private armedFor = Number.POSITIVE_INFINITY;
  private sleepCancel: AbortController | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly sleep: Sleep,
  ) {}

  /** True while any entry waits. */
  get size(): number {
    let n = 0;
    for (let e = this.head; e; e = e.deadlineNext) n++;
    return n;
  }

  add(entry: DeadlineEntry, at: number): void {
    entry.deadlineAt = at;
    entry.inDeadlineQueue = true;
    let before = this.tail;
    // Deadlines almost always arrive in order; walking back only happens when the clock regressed.
    while (before !== undefined && before.deadlineAt > at) before = before.deadlinePrev;
    const after = before === undefined ? this.head : before.deadlineNext;
    entry.deadlinePrev = before;
    entry.deadlineNext = after;
    if (before === undefined) this.head = entry;
    else before.deadlineNext = entry;
    if (after === undefined) this.tail = entry;
    else after.deadlinePrev = entry;
    if (at < this.armedFor) this.arm(at);
  }

  remove(entry: DeadlineEntry): void {
    if (!entry.inDeadlineQueue) return;
    this.unlink(entry);
    if (this.head === undefined) this.disarm();
  }

  private unlink(entry: DeadlineEntry): void {
    const { deadlinePrev: prev, deadlineNext: next } = entry;
    if (prev === undefined) this.head = next;
    else prev.deadlineNext = next;
    if (next === undefined) this.tail = prev;
    else next.deadlinePrev = prev;
    entry.deadlinePrev = undefined;
    entry.deadlineNext = undefined;
    entry.inDeadlineQueue = false;
  }

  private arm(at: number): void {
    this.disarm();
    this.armedFor = at;
    const delay = Math.max(0, at - this.clock());
    const cancel = new AbortController();
    this.sleepCancel = cancel;
    let waiting: Promise<void>;
    try {
      waiting = this.sleep(delay, cancel.signal);
    } catch (e) {
      waiting = Promise.reject(e);
    }
    waiting.then(
      () => {
        if (this.sleepCancel !== cancel) return;
        this.sleepCancel = undefined;
        this.fire();
      },
      (e: unknown) => {
        if (this.sleepCancel !== cancel) return;
        this.sleepCancel = undefined;
        this.failAll(new DeadlineTimerError(e));
      },
    );
  }

  private disarm(): void {
    this.armedFor = Number.POSITIVE_INFINITY;
    if (this.sleepCancel !== undefined) {
      const cancel = this.sleepCancel;
      this.sleepCancel = undefined;
      cancel.abort();
    }
  }

  private fire(): void {
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.clock();
    for (let e = this.head; e !== undefined && e.deadlineAt <= now; e = this.head) {
      this.unlink(e);
      e.onDeadline(undefined);
    }
    const head = this.head;
    if (head !== undefined && head.deadlineAt < this.armedFor) this.arm(head.deadlineAt);
  }

  /** The deadline cannot be enforced: every waiting entry learns it at once. */
  private failAll(error: DeadlineTimerError): void {
    this.armedFor = Number.POSITIVE_INFINITY;
    for (let e = this.head; e !== undefined; e = this.head) {
      this.unlink(e);
      e.onDeadline(error);
    }
  }
}
