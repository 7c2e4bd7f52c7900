import { describe, expect, it } from 'vitest';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { protect } from '../protect/protect.js';
import { createRouter } from '../routing/router.js';
import { createManualClock } from '../time/manual-clock.js';
import type { ResilienceEvent } from './resilience-events.js';

const down = () => Promise.reject(new Error('down'));

describe('onEvent: one listener for every decision', () => {
  it('protect: retries with attempt numbers, the circuit opening, then a circuit-open refusal', async () => {
    const clock = createManualClock();
    const events: ResilienceEvent[] = [];
    const run = protect({
      name: 'inventory',
      retry: { attempts: 3, backoff: { baseDelayMs: 10, jitter: 'none' } },
      circuit: { failureThreshold: 1, window: false, openDurationMs: 1_000 },
      clock,
      sleep: clock.sleep,
      onEvent: (e) => events.push(e),
    });
    let calls = 0;
    const flaky = () => (++calls < 3 ? down() : Promise.resolve('up'));
    await expect(clock.run(run(flaky))).resolves.toBe('up');
    expect(events).toEqual([
      {
        kind: 'retry',
        method: undefined,
        target: 'inventory',
        attempt: 1,
        delayMs: 10,
        reason: 'Error',
      },
      {
        kind: 'retry',
        method: undefined,
        target: 'inventory',
        attempt: 2,
        delayMs: 20,
        reason: 'Error',
      },
    ]);
    events.length = 0;
    await expect(clock.run(run(down))).rejects.toThrow('down');
    expect(events.filter((e) => e.kind === 'circuit')).toEqual([
      {
        kind: 'circuit',
        method: undefined,
        target: 'inventory',
        from: 'closed',
        to: 'open',
        openDurationMs: 1_000,
      },
    ]);
    events.length = 0;
    const before = calls;
    await expect(run(down)).rejects.toSatisfy(isCircuitOpenError);
    expect(calls).toBe(before);
    expect(events).toEqual([
      { kind: 'refused', method: undefined, target: 'inventory', reason: 'circuit-open' },
    ]);
  });

  it('a throwing listener breaks no call, and is told every event still', async () => {
    const clock = createManualClock();
    let told = 0;
    const run = protect({
      retry: { attempts: 2, backoff: { baseDelayMs: 0 } },
      circuit: { failureThreshold: 1, window: false },
      clock,
      sleep: clock.sleep,
      onEvent: () => {
        told++;
        throw new Error('listener bug');
      },
    });
    await expect(clock.run(run(down))).rejects.toThrow('down');
    // The retry and the circuit opening.
    expect(told).toBe(2);
    await expect(run(down)).rejects.toSatisfy(isCircuitOpenError);
    expect(told).toBe(3);
  });

  it('router: a failover names the provider left and the one tried next; a hedge is told', async () => {
    const clock = createManualClock();
    const events: ResilienceEvent[] = [];
    const router = createRouter({
      providers: [
        { id: 'a', resource: 'a' },
        { id: 'b', resource: 'b' },
      ],
      selection: 'priority',
      protection: { circuit: { failureThreshold: 1, window: false, openDurationMs: 1_000 } },
      clock,
      sleep: clock.sleep,
      onEvent: (e) => events.push(e),
    });
    const served: string[] = [];
    const call = (id: string) => {
      served.push(id);
      return id === 'a' ? down() : Promise.resolve(id);
    };
    await expect(clock.run(router.execute(call))).resolves.toBe('b');
    expect(served).toEqual(['a', 'b']);
    expect(events).toContainEqual({
      kind: 'failover',
      method: undefined,
      target: 'router',
      from: 'a',
      to: 'b',
      reason: 'Error',
    });
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'circuit', target: 'a', from: 'closed', to: 'open' }),
    );

    events.length = 0;
    const hedged = createRouter({
      providers: [
        { id: 'a', resource: 'a' },
        { id: 'b', resource: 'b' },
      ],
      selection: 'priority',
      hedge: { delayMs: 10 },
      clock,
      sleep: clock.sleep,
      onEvent: (e) => events.push(e),
    });
    const slow = (id: string) => clock.sleep(id === 'a' ? 100 : 5).then(() => id);
    const answer = hedged.execute(slow);
    await clock.advanceAsync(20);
    await expect(answer).resolves.toBe('b');
    expect(events).toEqual([{ kind: 'hedge', method: undefined, target: 'router', attempt: 2 }]);

    // A request that names its method: its events carry it.
    events.length = 0;
    const named = hedged.execute(slow, { method: '/shop.Cart/Get' });
    await clock.advanceAsync(20);
    await expect(named).resolves.toBe('b');
    expect(events).toEqual([
      { kind: 'hedge', method: '/shop.Cart/Get', target: 'router', attempt: 2 },
    ]);
    expect(() => hedged.execute(slow, { method: 7 as never })).toThrow(
      'router.execute options.method must be a string, got 7',
    );
  });
});
