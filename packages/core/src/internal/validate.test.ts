import { describe, expect, it } from 'vitest';
import { checkKeys, checkNumber, checkOptions, optionPath } from './validate.js';

const KEYS = { timeout: true, attempts: true, baseDelayMs: true, k: true } as const;

const message = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('did not throw');
};

describe('checkKeys', () => {
  it('accepts known keys and an empty object', () => {
    expect(() => checkKeys('f', { timeout: 1, k: 2 }, KEYS)).not.toThrow();
    expect(() => checkKeys('f', {}, KEYS)).not.toThrow();
  });

  it.each([
    ['timout', 'timeout'], // a dropped letter
    ['tiemout', 'timeout'], // two letters swapped
    ['Timeout', 'timeout'], // case
    ['baseDelay', 'baseDelayMs'], // the name without its unit
    ['maxAttempts', 'attempts'], // the name inside a longer one
  ])('suggests the key %s meant (%s)', (typo, meant) => {
    expect(message(() => checkKeys('f', { [typo]: 1 }, KEYS))).toBe(
      `f: unknown option \`${typo}\` — did you mean \`${meant}\`?`,
    );
  });

  it.each(['banana', 'x', 'toString', '__proto__'])('suggests nothing far off: %s', (key) => {
    const o = JSON.parse(`{"${key}": 1}`) as object;
    expect(message(() => checkKeys(undefined, o, KEYS))).toBe(`unknown option \`${key}\``);
  });

  it('names the breaker name for a renamed circuit key, only where that name is known', () => {
    const circuit = { failureThreshold: true, openDurationMs: true } as const;
    expect(message(() => checkKeys('f', { reset: 1 }, circuit, 'health'))).toBe(
      'f: unknown option `health.reset` — did you mean `health.openDurationMs`?',
    );
    expect(message(() => checkKeys('f', { failures: 1 }, circuit))).toBe(
      'f: unknown option `failures` — did you mean `failureThreshold`?',
    );
    expect(message(() => checkKeys('f', { reset: 1 }, KEYS))).toBe('f: unknown option `reset`');
  });

  it('names the full path of a nested object', () => {
    expect(message(() => checkKeys('f', { attemps: 1 }, KEYS, 'retry'))).toBe(
      'f: unknown option `retry.attemps` — did you mean `retry.attempts`?',
    );
  });
});

describe('optionPath', () => {
  it('puts the prefix in front of the path and the suggestion, and names the outer factory', () => {
    const build = () => checkOptions('inner', { attemps: 1 }, KEYS, 'backoff');
    const error = (() => {
      try {
        optionPath('retry', build, 'outer');
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toBe(
      'outer: unknown option `retry.backoff.attemps` — did you mean `retry.backoff.attempts`?',
    );
  });

  it('keeps the error class of a value error', () => {
    const run = () => optionPath('a[0]', () => checkNumber('b', -1, { min: 0 }));
    expect(run).toThrow(new RangeError('a[0].b must be >= 0, got -1'));
  });

  it('maps paths with a function, for options renamed on the way in', () => {
    const run = () =>
      optionPath(
        (p) => p.replace(/^providers/, 'targets'),
        () => checkNumber('providers[0].x', 'no'),
      );
    expect(run).toThrow(new TypeError('targets[0].x must be a number, got "no"'));
  });

  it('passes other errors through untouched', () => {
    const boom = new TypeError('boom');
    const run = () =>
      optionPath('a', () => {
        throw boom;
      });
    expect(run).toThrow(boom);
  });
});
