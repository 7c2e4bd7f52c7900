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

describe('routing channel: the panic rule', () => {
  for (const [name, panic, sent] of [
    ['on by default: one call in ten goes to the ejected target', undefined, 3],
    ['panic: false refuses every call while the target is ejected', false, 1],
  ] as const) {
    it(name, async () => {
      const { servers, client } = await routingSetup([{}], {
        idempotent,
        circuit: { failureSpanMs: 0, failureThreshold: 1, openDurationMs: 60_000 },
        ...(panic === undefined ? {} : { panic }),
      });
      const [server] = servers;
      server?.setFaults([{ status: Status.UNAVAILABLE }]);
      for (let i = 0; i < 21; i++) expect((await echoUnary(client, {})).ok).toBe(false);
      // The call that ejected it, then the 10th and 20th of the 20 it would refuse, as recovery calls.
      expect(server?.total()).toBe(sent);
    });
  }
});
