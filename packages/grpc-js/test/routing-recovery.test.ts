import { echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import { systemSleep } from '@breakwater/core';
import { status as Status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { idempotentMethods } from '../src/index.js';
import { routingSetup } from './routing-helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());

describe('routing channel: a target back to READY half-opens its circuit at once', () => {
  it('the restarted primary gets its recovery call long before its open duration (60 s) ends', async () => {
    const { servers, channel, client } = await routingSetup([{}, {}], {
      idempotent,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
    });
    const [primary] = servers;
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-1');
    await primary?.stop();
    // The primary refuses connections: its call fails over, and its circuit opens for 60 s.
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-2');
    expect(channel.circuit('replica-1')?.state).toBe('open');
    await primary?.restart();
    const served: string[] = [];
    // The channel reconnects on its own (FAST_RECONNECT: 50–200 ms backoff) and, once READY,
    // lets the primary's recovery call go; 5 s is only a cap for a loaded machine.
    for (let i = 0; i < 250 && served.at(-1) !== 'replica-1'; i++) {
      await systemSleep(20);
      const outcome = await echoUnary(client, {});
      expect(outcome.ok).toBe(true);
      served.push(outcome.value?.replica ?? 'failed');
    }
    expect(served.at(-1)).toBe('replica-1');
    expect(channel.circuit('replica-1')?.state).toBe('closed');
  });
});

describe("routing channel: the panic rule (the core router's outage gate)", () => {
  /** Three targets all answering UNAVAILABLE; calls every 20 ms for 1 s: attempts the servers saw, and the wall time. */
  async function outage(panic: false | undefined): Promise<{ sent: number; ms: number }> {
    const { servers, client } = await routingSetup([{}, {}, {}], {
      idempotent,
      circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 200 },
      ...(panic === undefined ? {} : { panic }),
    });
    for (const s of servers) s.setFaults([{ status: Status.UNAVAILABLE }]);
    // Fails over through all three: every circuit opens.
    expect((await echoUnary(client, {})).ok).toBe(false);
    const before = servers.reduce((n, s) => n + s.total(), 0);
    const start = performance.now();
    for (let i = 0; i < 50; i++) {
      await systemSleep(20);
      expect((await echoUnary(client, {})).ok).toBe(false);
    }
    return {
      sent: servers.reduce((n, s) => n + s.total(), 0) - before,
      ms: performance.now() - start,
    };
  }

  it('on by default: one recovery call per open duration across all the targets, not one per target', async () => {
    const on = await outage(undefined);
    expect(on.sent).toBeGreaterThanOrEqual(1);
    expect(on.sent).toBeLessThanOrEqual(Math.floor(on.ms / 200) + 1);
    // panic: false leaves each target's circuit to probe on its own (and fail over).
    const off = await outage(false);
    expect(off.sent).toBeGreaterThan(Math.floor(off.ms / 200) + 1);
  });
});
