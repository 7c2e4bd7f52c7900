import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTimer, startTimerWith, stopTimer } from './timer.js';

// Host timers fire a delay past 2^31-1 ms after 1 ms; a 30-day deadline must not.
const LIMIT = 2_147_483_647;

describe('startTimer and startTimerWith past the host limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('startTimer and startTimerWith wait the whole delay', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const withArg = vi.fn();
    startTimer(2 * LIMIT + 7, fn);
    startTimerWith(LIMIT + 1, withArg, 'call');
    vi.advanceTimersByTime(LIMIT);
    expect(withArg).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(withArg).toHaveBeenCalledWith('call');
    vi.advanceTimersByTime(LIMIT + 5);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stopTimer cancels a long timer on any step', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const early = startTimerWith(3 * LIMIT, fn, 1);
    const late = startTimer(3 * LIMIT, fn);
    stopTimer(early);
    vi.advanceTimersByTime(2 * LIMIT + 1);
    stopTimer(late);
    vi.advanceTimersByTime(3 * LIMIT);
    expect(fn).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a short timer is a plain host timer', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    startTimerWith(10, fn, 'x');
    vi.advanceTimersByTime(10);
    expect(fn).toHaveBeenCalledWith('x');
  });
});
