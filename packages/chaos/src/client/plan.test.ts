import { createManualClock, fixedRandom } from '@breakwater/core/time';
import { describe, expect, it } from 'vitest';
import { createChaosPlanner } from './plan.js';

describe('createChaosPlanner', () => {
  it('fails about errorRate of calls, reproducibly for a seed', () => {
    const run = (seed: number) => {
      const planner = createChaosPlanner({ errorRate: 0.3, seed });
      return Array.from({ length: 1000 }, () => planner.plan('/s/M')?.fail === true);
    };
    const failed = run(7).filter(Boolean).length;
    // Binomial(1000, 0.3): sd ≈ 14.5; ±60 is beyond 4 sd.
    expect(failed).toBeGreaterThan(240);
    expect(failed).toBeLessThan(360);
    expect(run(7)).toEqual(run(7));
    expect(run(8)).not.toEqual(run(7));
  });

  it('adds latency to latencyRate of calls and draws from the distribution', () => {
    const planner = createChaosPlanner({
      latency: { kind: 'tail', percent: 10, extraMs: 300, baseMs: 5 },
      seed: 3,
    });
    const delays = Array.from({ length: 2000 }, () => planner.plan('x')?.delayMs ?? 0);
    expect(new Set(delays)).toEqual(new Set([5, 305]));
    const slow = delays.filter((d) => d === 305).length;
    expect(slow).toBeGreaterThan(130);
    expect(slow).toBeLessThan(270);
    const never = createChaosPlanner({ latency: { kind: 'fixed', ms: 9 }, latencyRate: 0 });
    expect(never.plan('x')).toBeUndefined();
  });

  it('touches only the listed methods, by name or full path, and honours the kill switch', () => {
    let on = true;
    const planner = createChaosPlanner({
      errorRate: 1,
      methods: ['Unary', '/pkg.S/Other', 'user.get'],
      enabled: () => on,
      random: fixedRandom(0),
    });
    expect(planner.plan('/pkg.S/Unary')).toEqual({ delayMs: 0, fail: true });
    expect(planner.plan('/pkg.S/Other')?.fail).toBe(true);
    expect(planner.plan('user.get')?.fail).toBe(true);
    expect(planner.plan('/pkg.S/Bidi')).toBeUndefined();
    on = false;
    expect(planner.plan('/pkg.S/Unary')).toBeUndefined();
  });

  it('uses the injected sleep', () => {
    const clock = createManualClock();
    expect(createChaosPlanner({ sleep: clock.sleep }).sleep).toBe(clock.sleep);
  });

  it('rejects invalid options naming them', () => {
    expect(() => createChaosPlanner({ errorRate: 1.5 })).toThrow(/errorRate/);
    expect(() => createChaosPlanner({ latencyRate: -1 })).toThrow(/latencyRate/);
    expect(() => createChaosPlanner({ latency: { kind: 'fixed', ms: -1 } })).toThrow(/latency\.ms/);
    expect(() => createChaosPlanner({ methods: 'Unary' as never })).toThrow(TypeError);
    expect(() => createChaosPlanner(null as never)).toThrow(TypeError);
  });
});
