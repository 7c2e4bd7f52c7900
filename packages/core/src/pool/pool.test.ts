import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOperationAbortedError, isQueueFullError, QueueFullError } from '../errors/index.js';
import { neverAbortedSignal } from '../internal/abort.js';
import { type Deferred, deferred, tick } from '../test-helpers/async.js';
import { createPool, createSlotPool } from './pool.js';

describe('createPool', () => {
  it('runs at most `concurrency` tasks and starts queued ones FIFO', async () => {
    const pool = createPool({ concurrency: 2 });
    const gates = [deferred(), deferred(), deferred(), deferred()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      pool.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    expect(started).toEqual([0, 1]);
    expect([pool.active, pool.queued]).toEqual([2, 2]);
    gates[1]?.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.resolve();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    expect([pool.active, pool.queued]).toEqual([2, 0]);
    gates[2]?.resolve();
    gates[3]?.resolve();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2, 3]);
    expect(pool.stats()).toMatchObject({ started: 4, completed: 4, failed: 0, active: 0 });
  });

  it('passes the caller signal to the task, or the shared never-aborted one', async () => {
    const pool = createPool({ concurrency: 1 });
    const ac = new AbortController();
    await expect(pool.run((s) => s, { signal: ac.signal })).resolves.toBe(ac.signal);
    await expect(pool.run((s) => s)).resolves.toBe(neverAbortedSignal);
  });

  it('rejects with QueueFullError without running the task when the queue is full', async () => {
    const pool = createPool({ concurrency: 1, maxQueue: 1 });
    const seen: unknown[] = [];
    pool.onQueueFull((e) => seen.push(e));
    const gate = deferred();
    const first = pool.run(() => gate.promise);
    const second = pool.run(() => 'queued');
    let ran = false;
    const third = pool.run(() => {
      ran = true;
    });
    await expect(third).rejects.toBeInstanceOf(QueueFullError);
    await third.catch((e: unknown) => expect(isQueueFullError(e)).toBe(true));
    expect(ran).toBe(false);
    expect(seen).toEqual([{ active: 1, queued: 1, maxQueue: 1 }]);
    gate.resolve();
    await first;
    await expect(second).resolves.toBe('queued');
    expect(pool.stats()).toMatchObject({ queueFull: 1, rejected: 1, completed: 2 });
  });

  it('maxQueue 0 means no queue', async () => {
    const pool = createPool({ concurrency: 1, maxQueue: 0 });
    const gate = deferred();
    const first = pool.run(() => gate.promise);
    await expect(pool.run(() => 1)).rejects.toThrow(QueueFullError);
    gate.resolve();
    await first;
    await expect(pool.run(() => 2)).resolves.toBe(2);
  });

  it('an already-aborted signal rejects with its reason and never runs the task', async () => {
    const pool = createPool({ concurrency: 1 });
    const reason = new Error('gone');
    let ran = false;
    await expect(
      pool.run(
        () => {
          ran = true;
        },
        { signal: AbortSignal.abort(reason) },
      ),
    ).rejects.toBe(reason);
    await expect(pool.run(() => 1, { signal: AbortSignal.abort('plain') })).rejects.toSatisfy(
      isOperationAbortedError,
    );
    expect(ran).toBe(false);
    expect(pool.stats()).toMatchObject({ aborted: 2, rejected: 2, started: 0 });
  });

  it('an aborted queued task leaves the queue at once and frees its place', async () => {
    const pool = createPool({ concurrency: 1, maxQueue: 1 });
    const gate = deferred();
    const first = pool.run(() => gate.promise);
    const ac = new AbortController();
    let ran = false;
    const queued = pool.run(
      () => {
        ran = true;
      },
      { signal: ac.signal },
    );
    expect(pool.queued).toBe(1);
    const reason = new Error('caller left');
    ac.abort(reason);
    // Synchronously: the place is free before any promise continuation runs.
    expect(pool.queued).toBe(0);
    const replacement = pool.run(() => 'replacement');
    expect(pool.queued).toBe(1);
    await expect(queued).rejects.toBe(reason);
    gate.resolve();
    await first;
    await expect(replacement).resolves.toBe('replacement');
    expect(ran).toBe(false);
  });

  it('removes the abort listener once a queued task starts', async () => {
    const pool = createPool({ concurrency: 1 });
    const gate = deferred();
    const first = pool.run(() => gate.promise);
    const ac = new AbortController();
    const removed: unknown[] = [];
    const original = ac.signal.removeEventListener.bind(ac.signal);
    ac.signal.removeEventListener = (type: string, l: never) => {
      removed.push(type);
      original(type, l);
    };
    const second = pool.run((s) => s.aborted, { signal: ac.signal });
    gate.resolve();
    await first;
    expect(removed).toEqual(['abort']);
    // Aborting after start does not touch the pool; the task sees it through its signal.
    await expect(second).resolves.toBe(false);
    ac.abort();
    expect(pool.stats().aborted).toBe(0);
  });

  it('frees the slot when a task throws synchronously or rejects', async () => {
    const pool = createPool({ concurrency: 1 });
    await expect(
      pool.run(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    await expect(pool.run(() => Promise.reject(new Error('async')))).rejects.toThrow('async');
    expect(pool.active).toBe(0);
    await expect(pool.run(() => 'ok')).resolves.toBe('ok');
    expect(pool.stats()).toMatchObject({ failed: 2, completed: 1 });
  });

  it('onIdle resolves when nothing runs or waits', async () => {
    const pool = createPool({ concurrency: 1 });
    await pool.onIdle();
    const g1 = deferred();
    const g2 = deferred();
    void pool.run(() => g1.promise);
    void pool.run(() => g2.promise);
    let idle = false;
    void pool.onIdle().then(() => {
      idle = true;
    });
    g1.resolve();
    await tick();
    expect(idle).toBe(false);
    g2.resolve();
    await tick();
    expect(idle).toBe(true);
  });

  it('internal slot hand-off: tryTake only while a slot is free; give starts the oldest waiter', async () => {
    const pool = createSlotPool({ concurrency: 2, maxQueue: 1 });
    expect([pool.tryTake(), pool.tryTake(), pool.tryTake()]).toEqual([true, true, false]);
    expect(pool.active).toBe(2);
    const started: string[] = [];
    const queued = pool.run(() => {
      started.push('queued');
      return 'q';
    });
    await expect(pool.run(() => 'over')).rejects.toSatisfy(isQueueFullError);
    pool.give(true);
    // The waiter starts in the freed slot at once, without waiting for a tick.
    expect(started).toEqual(['queued']);
    await expect(queued).resolves.toBe('q');
    pool.giveFailed();
    expect([pool.active, pool.queued]).toEqual([0, 0]);
    await expect(pool.onIdle()).resolves.toBeUndefined();
    expect(pool.stats()).toMatchObject({ started: 3, completed: 2, failed: 1, queueFull: 1 });
    expect(pool.tryTake()).toBe(true);
    pool.giveOk();
    expect(pool.stats()).toMatchObject({ started: 4, completed: 3, active: 0 });
  });

  it('public hand-off on createPool: a taken slot counts toward concurrency until given back', async () => {
    const pool = createPool({ concurrency: 1, maxQueue: 1 });
    expect(pool.tryTake()).toBe(true);
    expect(pool.tryTake()).toBe(false);
    let ran = false;
    const queued = pool.run(() => {
      ran = true;
    });
    expect([pool.active, pool.queued, ran]).toEqual([1, 1, false]);
    pool.give(false);
    await queued;
    expect(ran).toBe(true);
    expect(pool.stats()).toMatchObject({ started: 2, completed: 1, failed: 1, active: 0 });
  });

  it('validates its options, naming them', () => {
    expect(() => createPool({ concurrency: 0 })).toThrow(/concurrency.*0/);
    expect(() => createPool({ concurrency: 1.5 })).toThrow(RangeError);
    expect(() => createPool({ concurrency: Number.NaN })).toThrow(TypeError);
    expect(() => createPool({ concurrency: 1, maxQueue: -1 })).toThrow(/maxQueue.*-1/);
    expect(() => createPool(undefined as never)).toThrow(TypeError);
    expect(createPool({ concurrency: Number.POSITIVE_INFINITY }).maxQueue).toBe(
      Number.POSITIVE_INFINITY,
    );
  });

  it('property: never over concurrency or maxQueue, FIFO, every call settles once', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('submit' as const), withSignal: fc.boolean() }),
      fc.record({ kind: fc.constant('finish' as const), index: fc.nat(), fail: fc.boolean() }),
      fc.record({ kind: fc.constant('abort' as const), index: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(op, { maxLength: 60 }),
        async (concurrency, maxQueue, ops) => {
          const pool = createPool({ concurrency, maxQueue });
          let running = 0;
          let maxRunning = 0;
          const gates: Deferred<void>[] = [];
          const controllers: AbortController[] = [];
          const startOrder: number[] = [];
          const settleCount: number[] = [];
          const outcomes: Promise<void>[] = [];
          for (const o of ops) {
            if (o.kind === 'submit') {
              const id = settleCount.length;
              settleCount.push(0);
              const ac = new AbortController();
              controllers.push(ac);
              const p = pool.run(
                async () => {
                  running++;
                  // Recorded, not asserted here: a throw inside the task would only reject it.
                  maxRunning = Math.max(maxRunning, running);
                  startOrder.push(id);
                  const g = deferred();
                  gates.push(g);
                  try {
                    await g.promise;
                  } finally {
                    running--;
                  }
                },
                o.withSignal ? { signal: ac.signal } : undefined,
              );
              outcomes.push(
                p.then(
                  () => void settleCount[id]!++,
                  () => void settleCount[id]!++,
                ),
              );
            } else if (o.kind === 'finish' && gates.length > 0) {
              const g = gates.splice(o.index % gates.length, 1)[0]!;
              if (o.fail) g.reject(new Error('x'));
              else g.resolve();
            } else if (o.kind === 'abort' && controllers.length > 0) {
              controllers[o.index % controllers.length]!.abort();
            }
            expect(pool.active).toBeLessThanOrEqual(concurrency);
            expect(pool.queued).toBeLessThanOrEqual(maxQueue);
            await tick();
            expect(pool.active).toBe(running);
          }
          // Let everything drain.
          while (gates.length > 0 || pool.active > 0) {
            for (const g of gates.splice(0)) g.resolve();
            await tick();
          }
          await pool.onIdle();
          await Promise.all(outcomes);
          expect(maxRunning).toBeLessThanOrEqual(concurrency);
          expect(settleCount.every((n) => n === 1)).toBe(true);
          // FIFO: tasks start in submission order.
          expect(startOrder).toEqual([...startOrder].sort((a, b) => a - b));
          const s = pool.stats();
          expect(s.started + s.rejected).toBe(settleCount.length);
          expect(s.completed + s.failed).toBe(s.started);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('createPool: draining', () => {
  it('20,000 queued tasks that throw synchronously: every call settles, no stack overflow, the pool is idle', async () => {
    const pool = createPool({ concurrency: 1 });
    const gate = deferred();
    const first = pool.run(() => gate.promise);
    const n = 20_000;
    const runs: Promise<unknown>[] = [];
    for (let i = 0; i < n; i++) {
      runs.push(
        pool.run(() => {
          throw new Error(`sync ${i}`);
        }),
      );
    }
    expect(pool.queued).toBe(n);
    gate.resolve();
    await first;
    const outcomes = await Promise.allSettled(runs);
    const reasons = outcomes.map((o) =>
      o.status === 'rejected' ? (o.reason as Error).message : '',
    );
    expect(reasons.filter((m, i) => m === `sync ${i}`)).toHaveLength(n);
    expect(pool.stats()).toMatchObject({ active: 0, queued: 0, started: n + 1, failed: n });
    await pool.onIdle();
    await expect(pool.run(() => 'next')).resolves.toBe('next');
  });

  it('property: sync throws, async failures and aborts in any mix all settle once and leave the pool idle', async () => {
    const taskArb = fc.record({
      kind: fc.constantFrom('ok', 'sync-throw', 'async-reject', 'abort-queued', 'pre-aborted'),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(taskArb, { minLength: 1, maxLength: 300 }),
        async (concurrency, tasks) => {
          const pool = createPool({ concurrency });
          const gate = deferred();
          const blockers = Array.from({ length: concurrency }, () => pool.run(() => gate.promise));
          const settled = tasks.map(() => 0);
          const controllers: AbortController[] = [];
          const runs = tasks.map((t, i) => {
            const ac = new AbortController();
            if (t.kind === 'pre-aborted') ac.abort();
            if (t.kind === 'abort-queued') controllers.push(ac);
            const p = pool.run(
              () => {
                if (t.kind === 'sync-throw') throw new Error('sync');
                if (t.kind === 'async-reject') return Promise.reject(new Error('async'));
                return i;
              },
              { signal: ac.signal },
            );
            return p.then(
              () => settled[i]!++,
              () => settled[i]!++,
            );
          });
          for (const ac of controllers) ac.abort();
          gate.resolve();
          await Promise.all(blockers);
          await Promise.all(runs);
          expect(settled.every((c) => c === 1)).toBe(true);
          expect(pool.active).toBe(0);
          expect(pool.queued).toBe(0);
          await pool.onIdle();
        },
      ),
      { seed: 42, numRuns: 60 },
    );
  });
});
