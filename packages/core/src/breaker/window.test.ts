import { describe, expect, it } from 'vitest';
import {
  checkCircuit,
  createCircuitBreakerState,
  recordFailure,
  recordSuccess,
} from './circuit-state.js';
import type { CircuitBreakerState } from './machine.js';
import type { CircuitBreakerConfig } from './types.js';

type S = CircuitBreakerState;
/** Plays a string of outcomes: F = failure, s = success, S = slow success (duration 500). */
function play(s: S, outcomes: string, now = 0): S {
  for (const o of outcomes) {
    s =
      o === 'F'
        ? recordFailure(s, s.config, now)
        : recordSuccess(s, s.config, now, { durationMs: o === 'S' ? 500 : 1 });
  }
  return s;
}
// The consecutive rule is off, so only the window can open these circuits; no span, so the
// window judges failures from the first (the span's gate on it: failure-span.test.ts).
const windowed = (config: Partial<CircuitBreakerConfig>) =>
  createCircuitBreakerState({
    failureThreshold: Number.POSITIVE_INFINITY,
    failureSpanMs: 0,
    ...config,
  });

describe('count window', () => {
  const config = {
    window: { type: 'count', size: 4, minimumCalls: 4, failureRateThreshold: 0.5 },
  } as const;

  it('waits for minimumCalls before judging the rate', () => {
    expect(play(windowed(config), 'FFF').state).toBe('closed');
    expect(play(windowed(config), 'FFFs').state).toBe('open');
  });

  it('opens once the failure rate reaches the threshold', () => {
    expect(play(windowed(config), 'sssF').state).toBe('closed'); // 1/4
    expect(play(windowed(config), 'ssFsF').state).toBe('open'); // last 4: sFsF = 2/4
  });

  it('forgets calls that slide out of the last `size`', () => {
    // FsFs... alternating never has more than 2 of 4 failing; with a 0.75 threshold it stays closed.
    const s = windowed({ window: { ...config.window, failureRateThreshold: 0.75 } });
    expect(play(s, 'FFsssFsFsFsF').state).toBe('closed');
    expect(play(s, 'sssFFF').state).toBe('open');
  });

  it('starts empty again after the circuit re-closes', () => {
    let s = windowed({ ...config, openDurationMs: 0 });
    s = play(s, 'FFss');
    expect(s.state).toBe('open');
    const { result, updatedState } = checkCircuit(s, 0);
    s = recordSuccess(updatedState, s.config, 0, { generation: result.generation });
    expect(s.state).toBe('closed');
    // Had 'FFss' survived, 'F' would make the last four FssF = 2/4 and open it.
    expect(play(s, 'F').state).toBe('closed');
    expect(play(s, 'FsFs').state).toBe('open');
  });
});

describe('time window', () => {
  const config = {
    window: { type: 'time', sizeMs: 1000, minimumCalls: 3, failureRateThreshold: 0.5 },
  } as const;

  it('counts calls up to sizeMs old, and not older ones', () => {
    const s = play(windowed(config), 'FF', 0);
    expect(play(s, 's', 999).state).toBe('open'); // 2/3 within the window
    expect(play(s, 'sss', 1000).state).toBe('closed'); // the failures have expired
  });

  it('opens on the rate once minimumCalls calls fall inside the window', () => {
    let s = windowed(config);
    s = play(s, 'FF', 0);
    expect(s.state).toBe('closed'); // 2 calls < minimumCalls
    s = play(s, 's', 900);
    expect(s.state).toBe('open'); // 2/3 within 1000 ms
  });

  it('expires old calls so they no longer reach minimumCalls', () => {
    let s = windowed(config);
    s = play(s, 'FF', 0);
    s = play(s, 's', 1000); // the failures are 1000 ms old: outside
    expect(s.state).toBe('closed');
    s = play(s, 'sF', 1500);
    expect(s.state).toBe('closed'); // 1/3
    s = play(s, 'F', 1600);
    expect(s.state).toBe('open'); // 2/4
  });
  it('works the same at any epoch', () => {
    const t0 = 1_700_000_000_037;
    let s = play(windowed(config), 'FF', t0);
    s = play(s, 'sss', t0 + 1000);
    expect(s.state).toBe('closed');
    expect(play(s, 'FFF', t0 + 1999).state).toBe('open'); // 3/6
  });
});

describe('slow calls', () => {
  const window = { type: 'count', size: 4, minimumCalls: 4, failureRateThreshold: 0.5 } as const;

  it('slow successes count toward the failure rate', () => {
    const s = windowed({ window, slowCall: { durationMs: 100, rateThreshold: 1 } });
    expect(play(s, 'ssFs').state).toBe('closed'); // 1/4
    expect(play(s, 'sSFs').state).toBe('open'); // (1 failure + 1 slow) / 4
  });

  it('the slow-call rate alone opens at slowCall.rateThreshold', () => {
    const s = windowed({
      window: { ...window, failureRateThreshold: 1 },
      slowCall: { durationMs: 100, rateThreshold: 0.5 },
    });
    expect(play(s, 'sssS').state).toBe('closed');
    expect(play(s, 'sSsS').state).toBe('open');
  });

  it('a call of unknown duration is never slow', () => {
    let s = windowed({ window, slowCall: { durationMs: 0, rateThreshold: 0.25 } });
    for (let i = 0; i < 4; i++) s = recordSuccess(s, s.config, 0);
    expect(s.state).toBe('closed');
    expect(recordSuccess(s, s.config, 0, { durationMs: 0 }).state).toBe('open');
  });

  it('a slow success still resets the consecutive streak', () => {
    let s = createCircuitBreakerState({
      failureThreshold: 2,
      window: { ...window, failureRateThreshold: 1 },
      slowCall: { durationMs: 100, rateThreshold: 1 },
    });
    s = play(s, 'FSF');
    expect(s).toMatchObject({ state: 'closed', consecutiveFailures: 1 });
  });
});
