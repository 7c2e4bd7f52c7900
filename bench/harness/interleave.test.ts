import { describe, expect, it } from 'vitest';
import { runInterleaved } from './interleave.js';

describe('runInterleaved', () => {
  it('runs every variant once per round, rotating the order', async () => {
    const order: string[] = [];
    const make = (name: string, value: number) => (round: number) => {
      order.push(`${name}${round}`);
      return value + round;
    };
    const out = await runInterleaved({ a: make('a', 10), b: make('b', 20), c: make('c', 30) }, 3);
    expect(order).toEqual(['a0', 'b0', 'c0', 'b1', 'c1', 'a1', 'c2', 'a2', 'b2']);
    expect(out).toEqual({ a: [10, 11, 12], b: [20, 21, 22], c: [30, 31, 32] });
  });

  it('alternates two variants A B, B A', async () => {
    const order: string[] = [];
    const push = (name: string, value: number) => async () => {
      order.push(name);
      return value;
    };
    await runInterleaved({ a: push('a', 1), b: push('b', 2) }, 4);
    expect(order.join('')).toBe('abbaabba');
  });
});
