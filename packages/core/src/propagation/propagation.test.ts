import {
  createRouter,
  currentInbound,
  DeadlineExceededError,
  PROPAGATION_HEADERS,
  protect,
} from '@breakwater/core';
import { createInboundCall, inboundFromHeaders, runInbound } from '@breakwater/core/node';
import type { ProtectRunner } from '@breakwater/core/types';
import { describe, expect, it } from 'vitest';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';

const never = new AbortController().signal;

describe('runInbound / currentInbound', () => {
  it('is undefined outside a bound handler and the call inside, across awaits and timers', async () => {
    expect(currentInbound()).toBeUndefined();
    const call = createInboundCall({ signal: never, deadline: 1_000 });
    const seen = await runInbound(call, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentInbound();
    });
    expect(seen).toBe(call);
    expect(currentInbound()).toBeUndefined();
  });

  it('keeps concurrent inbound calls apart', async () => {
    const calls = [1, 2, 3].map((attempt) =>
      createInboundCall({ signal: never, deadline: undefined, attempt }),
    );
    const seen = await Promise.all(
      calls.map((call, i) =>
        runInbound(call, async () => {
          await new Promise((r) => setTimeout(r, 3 - i));
          return currentInbound()?.attempt;
        }),
      ),
    );
    expect(seen).toEqual([1, 2, 3]);
  });

  it('markOverloaded sets overloaded', () => {
    const call = createInboundCall({ signal: never, deadline: undefined });
    expect(call.overloaded).toBe(false);
    call.markOverloaded('retries exhausted');
    expect(call.overloaded).toBe(true);
  });
});

describe('inboundFromHeaders', () => {
  const from = (headers: Record<string, string>) =>
    inboundFromHeaders(
      (name) => headers[name],
      never,
      () => 10_000,
    );

  it('reads the tRPC/HTTP wire', () => {
    const call = from({
      [PROPAGATION_HEADERS.http.timeout]: '250',
      [PROPAGATION_HEADERS.http.attempt]: '2',
      [PROPAGATION_HEADERS.http.criticality]: 'sheddable',
    });
    expect([call.deadline, call.attempt, call.criticality]).toEqual([10_250, 2, 'sheddable']);
  });

  it('reads the gRPC wire', () => {
    const call = from({ 'grpc-timeout': '1500m', 'grpc-previous-rpc-attempts': '2' });
    expect([call.deadline, call.attempt, call.criticality]).toEqual([11_500, 3, undefined]);
    expect(from({ 'grpc-timeout': '2S' }).deadline).toBe(12_000);
  });

  it('treats malformed headers as absent', () => {
    const call = from({
      'x-breakwater-timeout-ms': '-5',
      'x-breakwater-attempt': '0',
      'grpc-timeout': '5x',
      'x-breakwater-criticality': 'urgent',
    });
    expect([call.deadline, call.attempt, call.criticality]).toEqual([undefined, 1, undefined]);
  });
});

describe('the overloaded rule', () => {
  const noWait = async () => {};
  const serve = async (run: ProtectRunner, fails: boolean) => {
    const call = createInboundCall({ signal: never, deadline: undefined });
    await runInbound(call, () =>
      run(async () => {
        if (fails) throw new Error('downstream blip');
        return 'ok';
      }).catch(() => 'failed'),
    );
    return call.overloaded;
  };

  it("exhausted retries answer don't-retry only while most of the stack's last 20 calls failed", async () => {
    const run = protect({ retry: { attempts: 3 }, sleep: noWait });
    // The first call's failure is all the stack has seen: a downstream failing every call.
    expect(await serve(run, true)).toBe(true);
    for (let i = 0; i < 19; i++) expect(await serve(run, false)).toBe(false);
    // 1 failure in the last 20: an unlucky call, retryable by the layer above.
    expect(await serve(run, true)).toBe(false);
    // 10 in the last 20: overloaded again.
    const after = [];
    for (let i = 0; i < 9; i++) after.push(await serve(run, true));
    expect(after).toEqual([false, false, false, false, false, false, false, false, true]);
  });

  it("a circuit's refusal answers don't-retry whatever the recent calls did", async () => {
    const run = protect({
      circuit: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 60_000 },
      sleep: noWait,
    });
    for (let i = 0; i < 5; i++) await serve(run, false);
    // Opens the circuit: 1 failure in 6 calls, not overloaded.
    expect(await serve(run, true)).toBe(false);
    expect(await serve(run, false)).toBe(true);
  });
});

describe('the router inside a bound handler', () => {
  it('ends a hung request at the inherited deadline (less the margin) with DeadlineExceededError, not at the inbound cancellation', async () => {
    const inbound = new AbortController();
    const call = createInboundCall({ signal: inbound.signal, deadline: Date.now() + 100 });
    const router = createRouter({ providers: [{ id: 'hung', resource: 'hung' }] });
    let abortedAt: number | undefined;
    const startedAt = Date.now();
    const routed = runInbound(call, () =>
      router.execute(
        (_resource, { signal }) =>
          new Promise<never>((_, reject) =>
            signal.addEventListener('abort', () => {
              abortedAt = Date.now();
              reject(signal.reason);
            }),
          ),
      ),
    );
    // The inbound call is cancelled well after its deadline (a slow server): the router must not wait for it.
    const cancel = setTimeout(() => inbound.abort(new Error('inbound cancelled')), 400);
    try {
      const error = await routed.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect((abortedAt ?? Number.POSITIVE_INFINITY) - startedAt).toBeLessThan(150);
      expect((abortedAt ?? 0) - startedAt).toBeGreaterThanOrEqual(90);
    } finally {
      clearTimeout(cancel);
    }
  });
});
