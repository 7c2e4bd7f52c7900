import { createManualClock } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { runOpenLoop } from './open-loop.js';

describe('runOpenLoop', () => {
  it('starts requests on schedule even when every earlier one is still running', async () => {
    const clock = createManualClock(1_000);
    const startedAt: number[] = [];
    const release: Array<() => void> = [];
    const run = runOpenLoop({
      rate: 10,
      durationMs: 1_000,
      clock,
      sleep: clock.sleep,
      send: () => {
        startedAt.push(clock());
        // A server that never answers until the test says so: a closed loop would stall here.
        return new Promise<void>((resolve) => release.push(resolve));
      },
    });
    await clock.advanceAsync(1_000);
    expect(startedAt).toEqual([1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900]);
    for (const r of release) r();
    const result = await run;
    expect(result).toMatchObject({ started: 10, settled: 10, maxInFlight: 10, maxLagMs: 0 });
  });

  it('is bounded by maxRequests and by durationMs', async () => {
    const clock = createManualClock();
    let sent = 0;
    const byCount = await clock.run(
      runOpenLoop({
        rate: 100,
        durationMs: 10_000,
        maxRequests: 7,
        clock,
        sleep: clock.sleep,
        send: () => {
          sent++;
        },
      }),
    );
    expect(byCount.started).toBe(7);
    expect(sent).toBe(7);
    const byTime = await clock.run(
      runOpenLoop({ rate: 3, durationMs: 2_000, clock, sleep: clock.sleep, send: () => {} }),
    );
    expect(byTime.started).toBe(6);
  });

  it('counts rejections and throws as settled without unhandled rejections', async () => {
    const clock = createManualClock();
    const result = await clock.run(
      runOpenLoop({
        rate: 4,
        durationMs: 1_000,
        clock,
        sleep: clock.sleep,
        send: ({ index }) => {
          if (index === 0) throw new Error('sync');
          return Promise.reject(new Error('async'));
        },
      }),
    );
    expect(result).toMatchObject({ started: 4, settled: 4 });
  });

  it('stops starting on abort and gives up draining after drainTimeoutMs', async () => {
    const clock = createManualClock();
    const stop = new AbortController();
    const run = runOpenLoop({
      rate: 10,
      durationMs: 10_000,
      drainTimeoutMs: 500,
      signal: stop.signal,
      clock,
      sleep: clock.sleep,
      send: ({ index }) => {
        if (index === 2) stop.abort();
        return new Promise(() => {});
      },
    });
    const result = await clock.run(run);
    expect(result.started).toBe(3);
    expect(result.settled).toBe(0);
    expect(result.endedAt - result.startedAt).toBe(700);
  });

  it('rejects invalid options naming them', async () => {
    const send = () => {};
    await expect(runOpenLoop({ rate: 0, durationMs: 1, send })).rejects.toThrow(/rate/);
    await expect(runOpenLoop({ rate: 1, durationMs: -1, send })).rejects.toThrow(/durationMs/);
    await expect(runOpenLoop({ rate: 1, durationMs: 1, send: 3 as never })).rejects.toThrow(
      TypeError,
    );
  });
});
