import { describe, expect, it } from 'vitest';
import { floorDeadlineFresh, floorDeadlineReused, floorThen } from './floor.js';

// The floors are timed against protect: each must really wait for the operation and hand its
// outcome (value or error) to the caller, or the bench would compare protect with less work.
describe.each([
  ['floorThen', floorThen],
  ['floorDeadlineReused', floorDeadlineReused],
  ['floorDeadlineFresh', floorDeadlineFresh],
] as const)('%s', (_name, floor) => {
  it('settles with the operation’s value, after it', async () => {
    let release: (value: number) => void = () => {};
    const seen: number[] = [];
    const pending = floor(
      (ctx) =>
        new Promise<number>((resolve) => {
          seen.push(ctx.attempt);
          release = resolve;
        }),
    );
    let settled = false;
    void pending.then(() => {
      settled = true;
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(settled).toBe(false);
    release(7);
    await expect(pending).resolves.toBe(7);
    expect(seen).toEqual([1]);
  });

  it('rejects with the operation’s error, and the next call is unharmed', async () => {
    const error = new Error('down');
    await expect(floor(() => Promise.reject(error))).rejects.toBe(error);
    const calls = await Promise.all([floor(async () => 1), floor(async () => 2)]);
    expect(calls).toEqual([1, 2]);
  });
});
