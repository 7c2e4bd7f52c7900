import { describe, expect, it } from 'vitest';
import { timeoutHeaderValue } from '../src/internals/deadline.js';

describe('grpc-timeout header value', () => {
  it('is whole milliseconds, rounded up, while they fit in 8 digits; then coarser units', () => {
    expect(timeoutHeaderValue(1500.2)).toBe('1501m');
    expect(timeoutHeaderValue(0)).toBe('0m');
    expect(timeoutHeaderValue(-5)).toBe('0m');
    expect(timeoutHeaderValue(99_999_998.5)).toBe('99999999m');
    expect(timeoutHeaderValue(99_999_999.5)).toBe('100000S');
    expect(timeoutHeaderValue(1e11)).toBe('1666667M');
    expect(timeoutHeaderValue(1e15)).toBe('99999999H');
  });
});
