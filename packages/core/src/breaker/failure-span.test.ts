import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../time/manual-clock.js';
import { createCircuitBreaker } from './circuit-breaker.js';
import { createCircuitBreakerState, recordFailure } from './circuit-state.js';

describe('failureSpanMs: a streak must last, not only count', () => {
  it('does not open on failures that land together (a stall, a batch, a dropped connection)', () => {
    const clock = createManualClock(1000);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    for (let i = 0; i < 64; i++) breaker.onFailure();
    expect(breaker.state).toBe('closed');
    // The responses that were already there are read next: the streak is over.
    breaker.onSuccess();
    clock.advance(600);
    breaker.onFailure();
    expect(breaker.state).toBe('closed');
  });

  it('does not open on one failure before an event-loop stall and a burst right after it', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    breaker.onFailure();
    // A 1 s stall: every deadline timer of the calls in flight fires together after it.
    clock.advance(1_000);
    for (let i = 0; i < 64; i++) breaker.onFailure();
    // 65 failures in a row over 1 s, but at two moments: not an outage.
    expect(breaker.state).toBe('closed');
    // Failures that keep coming moment after moment are one.
    for (let i = 0; i < 3; i++) {
      clock.advance(100);
      breaker.onFailure();
    }
    expect(breaker.state).toBe('open');
  });

  it('does not open when a starved process takes hundreds of ms to work through the burst after a stall (soak, r5)', () => {
    // Recorded in the soak: the calls in flight were sent at 0–40 ms, one failed at 40 ms,
    // the loop stalled 1 s, and the client then took 5 ms per expired deadline: 64 failures
    // from 1 100 ms to 1 415 ms, the clock moving on between them, with no answer read.
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    clock.advance(40);
    breaker.onFailure(40);
    clock.advance(1_060);
    for (let i = 0; i < 64; i++) {
      breaker.onFailure(clock.now - (i % 40));
      clock.advance(5);
    }
    // Every one of them was sent before the streak's first moment: nothing new after that.
    expect(breaker.state).toBe('closed');
    breaker.onSuccess(2);
    expect(breaker.state).toBe('closed');
  });

  it('opens on a hang within one attempt timeout + the span: 1 s timeouts at 50 calls/s', () => {
    const clock = createManualClock(0);
    const opened: number[] = [];
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    breaker.onStateChange((e) => {
      if (e.to === 'open') opened.push(clock.now);
    });
    // The upstream hangs at 0: the call sent at t fails at t + 1 000, one every 20 ms.
    clock.advance(1_000);
    for (let sent = 0; breaker.state === 'closed' && sent < 5_000; sent += 20) {
      breaker.onFailure(1_000);
      clock.advance(20);
    }
    // Each failure's call was sent before the previous moment, but they fail as they were
    // sent; the old rule waited one timeout per moment: open at 5 000 ms.
    expect(opened[0]).toBeLessThanOrEqual(1_000 + 500);
  });

  it('does not open when the calls in flight over a whole second fail in a burst after a stall', () => {
    // 100 calls/s with 1 s deadlines, sent 0–1 000 ms; the loop stalls from 1 000 to 2 000 ms
    // and a starved process then works through every expired deadline at 5 ms each (as in
    // the soak): 1 s of sends failing over 505 ms, sends 10 ms apart failing 5 ms apart.
    // Not in step: nothing new after the first failure.
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    clock.advance(2_000);
    for (let sent = 0; sent <= 1_000; sent += 10) {
      breaker.onFailure(clock.now - sent);
      clock.advance(5);
    }
    expect(breaker.state).toBe('closed');
    breaker.onSuccess(2);
    expect(breaker.state).toBe('closed');
  });

  it('with durations, still opens when calls sent since the last moment keep failing', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    // An outage one call at a time: each call sent after the previous failure, failing in 20 ms.
    for (let i = 0; i < 6; i++) {
      clock.advance(100);
      breaker.onFailure(20);
    }
    expect(breaker.state).toBe('open');
    // 64 at a time, each failing after 80 ms and sent again at once: the calls that fail
    // ≥ 100 ms after a moment were sent after it, so the moments keep coming.
    const concurrent = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    const sentAt = Array.from({ length: 64 }, (_, i) => clock.now + i);
    let failures = 0;
    while (concurrent.state === 'closed' && failures < 10_000) {
      clock.advance(1);
      for (let i = 0; i < sentAt.length; i++) {
        if (clock.now - (sentAt[i] as number) < 80) continue;
        concurrent.onFailure(clock.now - (sentAt[i] as number));
        sentAt[i] = clock.now;
        failures++;
      }
    }
    expect(concurrent.state).toBe('open');
  });

  it('opens once the streak has both the count and the span', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 5, failureSpanMs: 500, clock });
    for (let i = 0; i < 5; i++) {
      breaker.onFailure();
      clock.advance(100);
    }
    // Five failures spanning 400 ms: not yet.
    expect(breaker.state).toBe('closed');
    breaker.onFailure();
    expect(breaker.state).toBe('open');
  });

  it('defaults to 500 ms with the default threshold; 0 lets a count alone open it', () => {
    const clock = createManualClock(0);
    const standard = createCircuitBreaker({ clock });
    const countOnly = createCircuitBreaker({ failureSpanMs: 0, clock });
    for (let i = 0; i < 5; i++) {
      standard.onFailure();
      countOnly.onFailure();
    }
    expect([standard.state, countOnly.state]).toEqual(['closed', 'open']);
  });

  it('failureThreshold: 1 opens on the first failure', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ failureThreshold: 1, clock });
    breaker.onFailure();
    expect(breaker.state).toBe('open');
    // The pure functions follow the same rule.
    const state = createCircuitBreakerState({ failureThreshold: 1 }, 0);
    expect(recordFailure(state, state.config, 0).state).toBe('open');
  });

  it('a threshold given without a span is a count: 3 failures at one instant open it', () => {
    const clock = createManualClock(0);
    const given = createCircuitBreaker({ failureThreshold: 3, clock });
    const spanned = createCircuitBreaker({ failureThreshold: 3, failureSpanMs: 500, clock });
    for (let i = 0; i < 2; i++) given.onFailure();
    expect(given.state).toBe('closed');
    for (let i = 0; i < 3; i++) spanned.onFailure();
    given.onFailure();
    // Giving the span too keeps the stall guard with a threshold of your own.
    expect([given.state, spanned.state]).toEqual(['open', 'closed']);
  });

  it('holds in the pure API too, and rejects a negative span naming it', () => {
    let s = createCircuitBreakerState({ failureThreshold: 2, failureSpanMs: 100 }, 0);
    s = recordFailure(s, s.config, 0);
    s = recordFailure(s, s.config, 50);
    expect(s.state).toBe('closed');
    s = recordFailure(s, s.config, 100);
    expect(s.state).toBe('open');
    expect(() => createCircuitBreaker({ failureSpanMs: -1 })).toThrow(/failureSpanMs must be >= 0/);
  });

  it('opens exactly when threshold failures in a row span failureSpanMs at threshold distinct moments, each (when its duration is known) of a call sent since the previous one or failing in step with it (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 400 }),
        fc.array(
          fc.record({
            ok: fc.boolean(),
            gap: fc.integer({ min: 0, max: 200 }),
            // How long the call took (undefined: not reported).
            took: fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined }),
          }),
          { maxLength: 60 },
        ),
        (threshold, span, outcomes) => {
          const clock = createManualClock(0);
          const breaker = createCircuitBreaker({
            failureThreshold: threshold,
            failureSpanMs: span,
            openDurationMs: 1e9,
            clock,
          });
          let streak = 0;
          let startedAt = 0;
          // Failures of the streak at least span / threshold ms after the previous one counted.
          let moments = 0;
          let momentAt = 0;
          let momentSentAt: number | undefined;
          let shouldOpen = false;
          for (const { ok, gap, took } of outcomes) {
            clock.advance(gap);
            if (ok) {
              streak = 0;
              breaker.onSuccess(took);
            } else {
              // ...and, when its duration is known, sent at or after that one, or sent at
              // least span / threshold after that one's call and failing in step with it
              // (no span: a count alone).
              const sentAt = took === undefined ? undefined : clock.now - took;
              const gap = span / threshold;
              const inStep =
                sentAt !== undefined &&
                momentSentAt !== undefined &&
                sentAt - momentSentAt >= gap &&
                sentAt - momentSentAt <= 1.5 * (clock.now - momentAt);
              const sentSince = span === 0 || sentAt === undefined || sentAt >= momentAt || inStep;
              if (streak === 0 || (clock.now - momentAt >= gap && sentSince)) {
                moments = streak === 0 ? 1 : moments + 1;
                momentAt = clock.now;
                momentSentAt = sentAt;
              }
              if (streak === 0) startedAt = clock.now;
              streak++;
              breaker.onFailure(took);
              if (streak >= threshold && moments >= threshold && clock.now - startedAt >= span) {
                shouldOpen = true;
              }
            }
            expect(breaker.state === 'open').toBe(shouldOpen);
            if (shouldOpen) break;
          }
        },
      ),
      { seed: 19, numRuns: 400 },
    );
  });
});

describe('failureSpanMs: the failure-rate window waits for distinct moments too', () => {
  const standard = {
    failureThreshold: 5,
    failureSpanMs: 500,
    window: { type: 'time', sizeMs: 10_000, minimumCalls: 100, failureRateThreshold: 0.5 },
  } as const;

  it('does not open when a cold client stalls and its first 64 calls all fail at once (soak, r5)', () => {
    // Recorded in the soak's cold start: the first 64 calls, sent together, all timed out
    // behind 1–2 s of starvation; the next 36 succeeded: 64% of the window's first 100.
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ ...standard, clock });
    clock.advance(1_500);
    for (let i = 0; i < 64; i++) breaker.onFailure(1_500 - i / 10);
    for (let i = 0; i < 36; i++) {
      clock.advance(3);
      breaker.onSuccess(3);
    }
    expect(breaker.state).toBe('closed');
  });

  it('still opens on a partial outage whose failures keep coming, once they fell at 5 moments', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ ...standard, clock });
    // Every 10 ms one call succeeds and two fail: the streak never reaches 5, the window's rate does.
    let ms = 0;
    while (breaker.state === 'closed' && ms < 5_000) {
      clock.advance(10);
      ms += 10;
      breaker.onSuccess(5);
      breaker.onFailure(5);
      breaker.onFailure(5);
    }
    expect(breaker.state).toBe('open');
    // 100 calls are seen at 340 ms; the fifth moment (100 ms apart) comes at 410 ms.
    expect(ms).toBeGreaterThanOrEqual(400);
    expect(ms).toBeLessThan(600);
  });

  it('counts moments afresh once the time window has forgotten them (a client idle, then a stall)', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({ ...standard, clock });
    // A healthy minute with scattered failures: plenty of moments, never open.
    for (let i = 0; i < 600; i++) {
      clock.advance(100);
      if (i % 20 === 0) breaker.onFailure(5);
      else breaker.onSuccess(5);
    }
    expect(breaker.state).toBe('closed');
    // Idle for 30 s, then the burst of a stall fills the emptied window.
    clock.advance(30_000);
    for (let i = 0; i < 64; i++) breaker.onFailure(1_000);
    for (let i = 0; i < 36; i++) breaker.onSuccess(3);
    expect(breaker.state).toBe('closed');
  });

  it('with the streak off (failureThreshold: Infinity), the window waits for the default 5 moments', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...standard,
      failureThreshold: Number.POSITIVE_INFINITY,
      clock,
    });
    for (let i = 0; i < 64; i++) breaker.onFailure(1_000);
    for (let i = 0; i < 36; i++) breaker.onSuccess(3);
    expect(breaker.state).toBe('closed');
    // Failures that keep coming, 100 ms apart: the fifth moment lets the window judge them.
    for (let i = 0; i < 4; i++) {
      clock.advance(100);
      breaker.onFailure(5);
    }
    expect(breaker.state).toBe('open');
  });

  it('without a span the window judges every failure, as before', () => {
    const clock = createManualClock(0);
    const breaker = createCircuitBreaker({
      ...standard,
      failureSpanMs: 0,
      failureThreshold: 1_000,
      clock,
    });
    for (let i = 0; i < 64; i++) breaker.onFailure(1_000);
    for (let i = 0; i < 36; i++) breaker.onSuccess(3);
    expect(breaker.state).toBe('open');
  });
});
