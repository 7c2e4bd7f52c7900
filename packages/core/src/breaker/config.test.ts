import { describe, expect, it } from 'vitest';
import { getDefaultCircuitBreakerConfig, validateCircuitBreakerConfig } from './config.js';
import type { CircuitBreakerConfig } from './types.js';

const count = { type: 'count', size: 10, failureRateThreshold: 0.5 } as const;

describe('getDefaultCircuitBreakerConfig', () => {
  it('has the documented defaults and returns a fresh object each time', () => {
    const d = getDefaultCircuitBreakerConfig();
    expect(d).toEqual({
      failureThreshold: 5,
      failureSpanMs: 500,
      window: { type: 'time', sizeMs: 10_000, minimumCalls: 100, failureRateThreshold: 0.5 },
      openDurationMs: 200,
      backoffMultiplier: 1,
      maxOpenDurationMs: 2_000,
      halfOpenMaxCalls: 1,
      successThreshold: 1,
    });
    d.failureThreshold = 99;
    (d.window as { sizeMs: number }).sizeMs = 1;
    expect(getDefaultCircuitBreakerConfig()).toMatchObject({
      failureThreshold: 5,
      window: { sizeMs: 10_000 },
    });
  });
});

describe('validateCircuitBreakerConfig', () => {
  it('fills defaults and keeps valid values', () => {
    expect(validateCircuitBreakerConfig({ failureThreshold: 2 })).toEqual({
      ...getDefaultCircuitBreakerConfig(),
      failureThreshold: 2,
      failureSpanMs: 0,
    });
    const c = validateCircuitBreakerConfig({
      halfOpenMaxCalls: Number.POSITIVE_INFINITY,
      successThreshold: 3,
      window: count,
      slowCall: { durationMs: 0, rateThreshold: 1 },
    });
    expect(c.halfOpenMaxCalls).toBe(Number.POSITIVE_INFINITY);
    expect(c.window).toEqual({ ...count, minimumCalls: 10 });
    expect(
      validateCircuitBreakerConfig({
        window: { type: 'time', sizeMs: 5, failureRateThreshold: count.failureRateThreshold },
      }).window,
    ).toMatchObject({ type: 'time', sizeMs: 5, minimumCalls: 1 });
  });

  it('accepts failureThreshold Infinity (rate window only)', () => {
    expect(
      validateCircuitBreakerConfig({ failureThreshold: Number.POSITIVE_INFINITY }).failureThreshold,
    ).toBe(Number.POSITIVE_INFINITY);
  });

  const bad = (partial: unknown) => () =>
    validateCircuitBreakerConfig(partial as Partial<CircuitBreakerConfig>);

  it('rejects a non-object', () => {
    expect(bad(5)).toThrow(TypeError);
    expect(bad(null)).toThrow(/options/);
  });

  it('failureThreshold: integer > 0', () => {
    expect(bad({ failureThreshold: 0 })).toThrow(RangeError);
    expect(bad({ failureThreshold: 1.5 })).toThrow(/failureThreshold.*1\.5/);
    expect(bad({ failureThreshold: '3' })).toThrow(TypeError);
    expect(bad({ failureThreshold: Number.NaN })).toThrow(/failureThreshold/);
  });

  it('openDurationMs: >= 0 and finite', () => {
    expect(bad({ openDurationMs: -1 })).toThrow(/openDurationMs.*-1/);
    expect(bad({ openDurationMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(validateCircuitBreakerConfig({ openDurationMs: 0 }).openDurationMs).toBe(0);
  });

  it('backoffMultiplier: >= 1', () => {
    expect(bad({ backoffMultiplier: 0.5 })).toThrow(/backoffMultiplier.*0\.5/);
    expect(bad({ backoffMultiplier: 0.5 })).toThrow(RangeError);
  });

  it('maxOpenDurationMs: >= openDurationMs', () => {
    expect(bad({ openDurationMs: 1000, maxOpenDurationMs: 999 })).toThrow(
      /maxOpenDurationMs.*>= 1000.*999/,
    );
    expect(bad({ maxOpenDurationMs: 'x' })).toThrow(TypeError);
  });

  it('maxOpenDurationMs defaults to 10 × openDurationMs, finite even for a huge openDurationMs', () => {
    expect(validateCircuitBreakerConfig({ openDurationMs: 2000 }).maxOpenDurationMs).toBe(20_000);
    expect(validateCircuitBreakerConfig({ openDurationMs: 0 }).maxOpenDurationMs).toBe(0);
    expect(validateCircuitBreakerConfig({ openDurationMs: 1e300 }).maxOpenDurationMs).toBe(1e300);
    expect(validateCircuitBreakerConfig({ openDurationMs: 1e15 }).maxOpenDurationMs).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(
      validateCircuitBreakerConfig({ maxOpenDurationMs: Number.POSITIVE_INFINITY })
        .maxOpenDurationMs,
    ).toBe(Number.POSITIVE_INFINITY);
  });

  it('halfOpenMaxCalls: integer >= 1 or Infinity', () => {
    expect(bad({ halfOpenMaxCalls: 0 })).toThrow(/halfOpenMaxCalls.*0/);
    expect(bad({ halfOpenMaxCalls: 2.5 })).toThrow(RangeError);
  });

  it('successThreshold: integer >= 1 and <= halfOpenMaxCalls', () => {
    expect(bad({ successThreshold: 0 })).toThrow(/successThreshold/);
    expect(bad({ successThreshold: 2 })).toThrow(/successThreshold.*<= 1.*2/);
    expect(bad({ successThreshold: 1.5, halfOpenMaxCalls: 3 })).toThrow(RangeError);
  });

  it('window: object with type count|time', () => {
    expect(bad({ window: 'count' })).toThrow(/window must be an object/);
    expect(bad({ window: { ...count, type: 'sliding' } })).toThrow(/window\.type.*sliding/);
  });

  it('window.size: integer > 0', () => {
    expect(bad({ window: { ...count, size: 0 } })).toThrow(/window\.size/);
    expect(bad({ window: { ...count, size: 2.5 } })).toThrow(RangeError);
  });

  it('window.sizeMs: > 0', () => {
    const time = { type: 'time', failureRateThreshold: 0.5 };
    expect(bad({ window: { ...time, sizeMs: 0 } })).toThrow(/window\.sizeMs.*0/);
    expect(bad({ window: time })).toThrow(TypeError);
  });

  it('window.minimumCalls: integer >= 1, at most the count size', () => {
    expect(bad({ window: { ...count, minimumCalls: 0 } })).toThrow(/window\.minimumCalls/);
    expect(bad({ window: { ...count, minimumCalls: 11 } })).toThrow(/window\.minimumCalls.*11/);
  });

  it('window.failureRateThreshold: in (0, 1]', () => {
    expect(bad({ window: { ...count, failureRateThreshold: 0 } })).toThrow(
      /window\.failureRateThreshold/,
    );
    expect(bad({ window: { ...count, failureRateThreshold: 1.01 } })).toThrow(RangeError);
  });

  it('slowCall.durationMs: >= 0', () => {
    expect(bad({ window: count, slowCall: { durationMs: -5, rateThreshold: 1 } })).toThrow(
      /slowCall\.durationMs.*-5/,
    );
  });

  it('slowCall.rateThreshold: in (0, 1]', () => {
    expect(bad({ window: count, slowCall: { durationMs: 5, rateThreshold: 0 } })).toThrow(
      /slowCall\.rateThreshold/,
    );
    expect(bad({ window: count, slowCall: { durationMs: 5, rateThreshold: 2 } })).toThrow(
      RangeError,
    );
  });

  it('slowCall needs a window: the default one, or an error naming slowCall when window is false', () => {
    const slowCall = { durationMs: 5, rateThreshold: 0.5 };
    expect(validateCircuitBreakerConfig({ slowCall }).window).toEqual(
      getDefaultCircuitBreakerConfig().window,
    );
    expect(bad({ window: false, slowCall })).toThrow(/slowCall.*window/);
  });
});
