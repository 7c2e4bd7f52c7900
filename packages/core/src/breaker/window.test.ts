import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkCircuit,
  createCircuitBreakerState,
  recordFailure,
  recordSuccess,
} from './circuit-state.js';
import type { CircuitBreakerState } from './machine.js';
import type { CircuitBreakerConfig, FailureRateWindow, SlowCallRule } from './types.js';
import { createWindow, type RateWindowState, recordCall, windowTripped } from './window.js';

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

/**
 * The time window's rule, stated over the list of recorded calls instead of buckets: a call
 * made in bucket `b` is live at bucket `q` when `q - 10 < b <= q`, unless a later call fell
 * in a different bucket of the same ring slot (`b' ≡ b mod 10`), which reused the slot.
 */
class ReferenceTimeWindow {
  private calls: { bucket: number; code: number }[] = [];
  constructor(private readonly bucketMs: number) {}

  record(code: number, now: number): void {
    const bucket = Math.floor(now / this.bucketMs);
    this.calls = this.calls.filter(
      (c) => c.bucket === bucket || (((c.bucket - bucket) % 10) + 10) % 10 !== 0,
    );
    this.calls.push({ bucket, code });
  }

  /** Live calls at `now` per outcome code. */
  counts(now: number): number[] {
    const q = Math.floor(now / this.bucketMs);
    const counts = [0, 0, 0, 0];
    for (const c of this.calls) if (c.bucket > q - 10 && c.bucket <= q) counts[c.code]! += 1;
    return counts;
  }

  tripped(
    config: FailureRateWindow,
    slowCall: SlowCallRule | undefined,
    now: number,
    failures: boolean,
  ): boolean {
    const [fastOk, fastFail, slowOk, slowFail] = this.counts(now) as [
      number,
      number,
      number,
      number,
    ];
    const calls = fastOk + fastFail + slowOk + slowFail;
    if (calls === 0 || calls < (config.minimumCalls ?? 1)) return false;
    if (failures && (fastFail + slowOk + slowFail) / calls >= config.failureRateThreshold) {
      return true;
    }
    return slowCall !== undefined && (slowOk + slowFail) / calls >= slowCall.rateThreshold;
  }
}

describe('time window running totals', () => {
  const liveCounts = (w: RateWindowState) => Array.from(w.totals);

  it('agree with a per-call reference for any clock: steady, jumping, moving back', () => {
    // Steps in ms with 100 ms buckets: within a bucket, a few buckets, past the whole window, back.
    const step = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 60 }) },
      { weight: 2, arbitrary: fc.integer({ min: 60, max: 1_500 }) },
      { weight: 1, arbitrary: fc.integer({ min: 1_500, max: 5_000 }) },
      { weight: 2, arbitrary: fc.integer({ min: -1_500, max: -1 }) },
    );
    const op = fc.record({
      step,
      code: fc.integer({ min: 0, max: 3 }),
      // Only look (read the verdict) without recording, as a breaker reading its state.
      look: fc.boolean(),
      failures: fc.boolean(),
    });
    const config = fc.record({
      type: fc.constant('time' as const),
      sizeMs: fc.constant(1_000),
      minimumCalls: fc.integer({ min: 1, max: 20 }),
      failureRateThreshold: fc.double({ min: 0.05, max: 1, noNaN: true }),
    });
    const slowCall = fc.option(
      fc.record({
        durationMs: fc.constant(1),
        rateThreshold: fc.double({ min: 0.05, max: 1, noNaN: true }),
      }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(
        config,
        slowCall,
        fc.integer({ min: -5_000, max: 1_700_000_000_000 }),
        fc.array(op, { maxLength: 200 }),
        (config, slow, start, ops) => {
          const w = createWindow(config);
          const reference = new ReferenceTimeWindow(100);
          let now = start;
          for (const o of ops) {
            now += o.step;
            if (!o.look) {
              recordCall(w, o.code, now);
              reference.record(o.code, now);
            }
            expect(windowTripped(w, config, slow, now, o.failures)).toBe(
              reference.tripped(config, slow, now, o.failures),
            );
            expect(liveCounts(w)).toEqual(reference.counts(now));
          }
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it('reads no bucket but its own for a call in the current bucket (O(1), not a scan)', () => {
    const config = { type: 'time', sizeMs: 10_000, failureRateThreshold: 0.5 } as const;
    let reads = 0;
    const stamps = new Proxy(new Float64Array(10).fill(Number.NEGATIVE_INFINITY), {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key);
      },
    });
    const w = { ...createWindow(config), stamps } as RateWindowState;
    recordCall(w, 0, 5);
    windowTripped(w, config, undefined, 5);
    reads = 0;
    for (let i = 0; i < 100; i++) {
      recordCall(w, 0, 10 + i);
      windowTripped(w, config, undefined, 10 + i);
    }
    // One read a call: whether the call's slot already holds the current bucket.
    expect(reads).toBe(100);
    expect(windowTripped(w, config, undefined, 200)).toBe(false);
  });
});
