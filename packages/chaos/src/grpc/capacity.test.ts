import { createManualClock, type Sleep } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { checkCapacity, createCapacity } from './capacity.js';

/** Serves `n` calls arriving now; resolves with the clock time each one was served at. */
function arrive(
  capacity: ReturnType<typeof createCapacity>,
  clock: () => number,
  n: number,
  gaveUp = new AbortController().signal,
): Promise<Array<number | 'refused'>> {
  return Promise.all(
    Array.from({ length: n }, () =>
      capacity.serve(gaveUp).then((o) => (o === 'refused' ? o : clock())),
    ),
  );
}

describe('createCapacity', () => {
  it('serves `workers` calls at once, FIFO, serviceMs each', async () => {
    const clock = createManualClock();
    const capacity = createCapacity({ workers: 2, serviceMs: 10 }, clock, clock.sleep);
    const done = arrive(capacity, clock, 5);
    expect(capacity.stats()).toMatchObject({ busy: 2, queued: 3 });
    expect(await clock.run(done)).toEqual([10, 10, 20, 20, 30]);
    expect(capacity.stats()).toEqual({
      served: 5,
      wasted: 0,
      refused: 0,
      busy: 0,
      queued: 0,
      peakInFlight: 5,
    });
  });

  it('late timers do not lower capacity: back-to-back work starts when the previous was due to end', async () => {
    const clock = createManualClock();
    // Every timer fires 3 ms late, as a busy event loop's do.
    const late: Sleep = (ms) => clock.sleep(ms + 3);
    const capacity = createCapacity({ workers: 1, serviceMs: 10 }, clock, late);
    const served = await clock.run(arrive(capacity, clock, 10));
    // Ten calls of 10 ms end at 100 ms (seen 3 ms late), not at 10 × 13 ms.
    expect(served.at(-1)).toBe(103);
  });

  it('serves a call whose client gave up while queued, and counts it as wasted', async () => {
    const clock = createManualClock();
    const capacity = createCapacity({ workers: 1, serviceMs: 10 }, clock, clock.sleep);
    const client = new AbortController();
    const first = arrive(capacity, clock, 1);
    const abandoned = arrive(capacity, clock, 1, client.signal);
    client.abort();
    expect(await clock.run(Promise.all([first, abandoned]))).toEqual([[10], [20]]);
    expect(capacity.stats()).toMatchObject({ served: 2, wasted: 1 });
    capacity.reset();
    expect(capacity.stats()).toMatchObject({ served: 0, wasted: 0, refused: 0 });
  });

  it('refuses at once beyond the queue bound', async () => {
    const clock = createManualClock();
    const capacity = createCapacity({ workers: 1, serviceMs: 10, queue: 1 }, clock, clock.sleep);
    const served = arrive(capacity, clock, 3);
    expect(await clock.run(served)).toEqual([10, 20, 'refused']);
    expect(capacity.stats()).toMatchObject({ served: 2, refused: 1 });
  });

  it('halving workers mid-run halves throughput once the calls in service are done', async () => {
    const clock = createManualClock();
    const capacity = createCapacity({ workers: 4, serviceMs: 10 }, clock, clock.sleep);
    const served = arrive(capacity, clock, 12);
    await clock.advanceAsync(5);
    capacity.set({ workers: 2, serviceMs: 10 });
    expect(capacity.stats().busy).toBe(4);
    await clock.advanceAsync(10);
    expect(capacity.stats()).toMatchObject({ served: 4, busy: 2, queued: 6 });
    expect(await clock.run(served)).toEqual([10, 10, 10, 10, 20, 20, 30, 30, 40, 40, 50, 50]);
    // Growing again starts new workers at once.
    const more = arrive(capacity, clock, 4);
    capacity.set({ workers: 4, serviceMs: 10 });
    expect(capacity.stats().busy).toBe(4);
    expect(await clock.run(more)).toEqual([60, 60, 60, 60]);
  });

  it('names the bad field', () => {
    expect(() => checkCapacity({ workers: 0, serviceMs: 10 })).toThrow(
      /capacity\.workers must be an integer >= 1, got 0/,
    );
    expect(() => checkCapacity({ workers: 1, serviceMs: 0 })).toThrow(/capacity\.serviceMs/);
    expect(() => checkCapacity({ workers: 1, serviceMs: 1, queue: -1 })).toThrow(/capacity\.queue/);
  });
});
