import { createManualClock } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { runTimeline, timelineDuration } from './timeline.js';

describe('runTimeline', () => {
  it('enters phases on fixed boundaries even when an enter is slow', async () => {
    const clock = createManualClock(0);
    const log: string[] = [];
    const phases = [
      { name: 'healthy', durationMs: 1_000, enter: () => log.push(`healthy@${clock()}`) },
      {
        name: 'kill',
        durationMs: 2_000,
        kind: 'outage' as const,
        // A kill that takes 300 ms must not delay the next phase.
        enter: async () => {
          log.push(`kill@${clock()}`);
          await clock.sleep(300);
        },
      },
      {
        name: 'restart',
        durationMs: 500,
        kind: 'recovery' as const,
        restores: ['a'],
        enter: () => log.push(`restart@${clock()}`),
      },
    ];
    const windows = await clock.run(runTimeline({ phases, clock, sleep: clock.sleep }));
    expect(log).toEqual(['healthy@0', 'kill@1000', 'restart@3000']);
    expect(windows).toEqual([
      { name: 'healthy', kind: 'healthy', restores: undefined, start: 0, readyAt: 0, end: 1000 },
      { name: 'kill', kind: 'outage', restores: undefined, start: 1000, readyAt: 1300, end: 3000 },
      { name: 'restart', kind: 'recovery', restores: ['a'], start: 3000, readyAt: 3000, end: 3500 },
    ]);
    expect(timelineDuration(phases)).toBe(3_500);
  });

  it('holds a phase holdMs after a slow enter and moves later phases back', async () => {
    const clock = createManualClock(0);
    const windows = await clock.run(
      runTimeline({
        phases: [
          { name: 'restart', durationMs: 1_000, holdMs: 500, enter: () => clock.sleep(800) },
          { name: 'after', durationMs: 1_000 },
        ],
        clock,
        sleep: clock.sleep,
      }),
    );
    expect(windows.map((w) => [w.start, w.readyAt, w.end])).toEqual([
      [0, 800, 1300],
      [1300, 1300, 2300],
    ]);
  });

  it('rejects when an enter action fails, and validates phases', async () => {
    const clock = createManualClock(0);
    const failing = runTimeline({
      phases: [
        {
          name: 'x',
          durationMs: 10,
          enter: () => {
            throw new Error('kill failed');
          },
        },
      ],
      clock,
      sleep: clock.sleep,
    });
    await expect(failing).rejects.toThrow('kill failed');
    await expect(runTimeline({ phases: [] })).rejects.toThrow(TypeError);
    await expect(runTimeline({ phases: [{ name: 'x', durationMs: -1 }] })).rejects.toThrow(
      /phases\[0\]\.durationMs/,
    );
  });
});
