import { echoUnary, loadEchoPackageDefinition } from '@breakwater/chaos';
import { systemSleep } from '@breakwater/core';
import { describe, expect, it } from 'vitest';
import { idempotentMethods } from '../src/index.js';
import { routingSetup } from './routing-helpers.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());

describe('routing channel: a target back to READY half-opens its circuit at once', () => {
  it('the restarted primary gets its recovery call long before health.reset (60 s)', async () => {
    const { servers, channel, client } = await routingSetup([{}, {}], {
      idempotent,
      health: { failures: 1, reset: 60_000 },
    });
    const [primary] = servers;
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-1');
    await primary?.stop();
    // The primary refuses connections: its call fails over, and its circuit opens for 60 s.
    expect((await echoUnary(client, {})).value?.replica).toBe('replica-2');
    expect(channel.health.isOpen('replica-1')).toBe(true);
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
    expect(channel.health.circuitState('replica-1')).toBe('closed');
  });
});
