import { describe, expect, it } from 'vitest';
import { isRoutingError, RoutingError } from './routing-error.js';

describe('RoutingError', () => {
  it('keeps ordered visits; errors are the operation failures only; cause is the last failure', () => {
    const a = new Error('a');
    const c = new Error('c');
    const e = new RoutingError([
      { providerId: 'a', status: 'failed', cause: a },
      { providerId: 'b', status: 'skipped', reason: 'circuit-open' },
      { providerId: 'c', status: 'failed', cause: c },
    ]);
    expect(e).toBeInstanceOf(AggregateError);
    expect(e.name).toBe('RoutingError');
    expect(e.errors).toEqual([a, c]);
    expect(e.cause).toBe(c);
    expect(e.visits.map((v) => v.providerId)).toEqual(['a', 'b', 'c']);
    expect(e.message).toBe('No provider succeeded (2 failed, 1 skipped)');
  });

  it('isRoutingError checks the brand, not instanceof', () => {
    expect(isRoutingError(new RoutingError([]))).toBe(true);
    expect(isRoutingError({ name: 'RoutingError' })).toBe(true);
    expect(isRoutingError(new AggregateError([]))).toBe(false);
    expect(isRoutingError(null)).toBe(false);
  });
});
