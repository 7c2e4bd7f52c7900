import { describe, expect, it } from 'vitest';
import { STANDARD_RESILIENCE } from '../attempts/resilience-options.js';
import { protect } from '../protect/protect.js';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import {
  DEFAULT_CIRCUIT_BREAKER_OPTIONS,
  getDefaultCircuitBreakerConfig,
  validateCircuitBreakerConfig,
} from './config.js';
import { isProbePermit } from './machine.js';

describe('the default circuit is the standard circuit (issue 19)', () => {
  it('is one definition: STANDARD_RESILIENCE.circuit is the breaker’s defaults', () => {
    expect(STANDARD_RESILIENCE.circuit).toBe(DEFAULT_CIRCUIT_BREAKER_OPTIONS);
    expect(validateCircuitBreakerConfig({})).toEqual(getDefaultCircuitBreakerConfig());
    expect(validateCircuitBreakerConfig(STANDARD_RESILIENCE.circuit)).toEqual(
      getDefaultCircuitBreakerConfig(),
    );
  });

  it('fills every option left out on its own: a partial config keeps the window and 200 ms', () => {
    // A threshold given alone is a count: the default span comes only with the default threshold.
    expect(validateCircuitBreakerConfig({ failureThreshold: 3 })).toEqual({
      ...getDefaultCircuitBreakerConfig(),
      failureThreshold: 3,
      failureSpanMs: 0,
    });
    expect(validateCircuitBreakerConfig({ openDurationMs: 1_000 })).toMatchObject({
      failureThreshold: 5,
      failureSpanMs: 500,
    });
    // The cap follows a given open duration, so spreading the defaults stays valid.
    expect(
      validateCircuitBreakerConfig({ ...DEFAULT_CIRCUIT_BREAKER_OPTIONS, openDurationMs: 5_000 }),
    ).toMatchObject({ openDurationMs: 5_000, maxOpenDurationMs: 50_000 });
  });

  it('window: left out or undefined is the standard window; false turns it off; errors name the full path', () => {
    const standard = getDefaultCircuitBreakerConfig().window;
    // A JS caller (or a spread of a partial object) may pass undefined: it is left out.
    expect(validateCircuitBreakerConfig({ window: undefined } as never).window).toEqual(standard);
    expect(validateCircuitBreakerConfig({ window: false }).window).toBeUndefined();
    expect(() => protect({ circuit: { window: { type: 'sliding' } as never } })).toThrow(
      /circuit\.window\.type.*sliding/,
    );
  });

  it('a 1 s event-loop stall, then every in-flight deadline failing at once, does not open it', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ clock });
    for (let i = 0; i < 1_000; i++) {
      breaker.onSuccess();
      clock.advance(1);
    }
    breaker.onFailure();
    clock.advance(1_000);
    for (let i = 0; i < 64; i++) breaker.onFailure();
    for (let i = 0; i < 100; i++) {
      breaker.onSuccess();
      clock.advance(1);
    }
    expect(breaker.state).toBe('closed');
  });

  it('a sustained outage opens it once failures have kept coming for 500 ms', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ clock });
    // 20 calls a second, every one failing.
    while (clock() < 500) {
      breaker.onFailure();
      expect(breaker.state).toBe('closed');
      clock.advance(50);
    }
    breaker.onFailure();
    expect(breaker.state).toBe('open');
  });

  it('half the calls failing (never five in a row) opens it once 100 calls were seen', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ clock });
    for (let i = 0; i < 49; i++) {
      breaker.onFailure();
      breaker.onSuccess();
      clock.advance(10);
    }
    breaker.onSuccess();
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('open');
  });

  it('sends the first probe 200 ms after opening, and every 200 ms however long the outage', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ clock });
    breaker.trip();
    expect(breaker.retryAfterMs()).toBe(200);
    clock.advance(199);
    expect(breaker.tryAcquire()).toBe(-1);
    // A 60 s outage: each failed probe re-opens for 200 ms again, never longer.
    for (let i = 0; i < 300; i++) {
      clock.advance(i === 0 ? 1 : 200);
      const permit = breaker.tryAcquire();
      expect(isProbePermit(permit)).toBe(true);
      breaker.release(permit, { outcome: 'failure' });
      expect(breaker.retryAfterMs()).toBe(200);
    }
    clock.advance(200);
    breaker.release(breaker.tryAcquire(), { outcome: 'success' });
    expect(breaker.state).toBe('closed');
  });
});
