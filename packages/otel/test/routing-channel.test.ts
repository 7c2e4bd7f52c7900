import {
  createEchoClient,
  echoUnary,
  loadEchoPackageDefinition,
  startGrpcChaosServer,
} from '@breakwater/chaos';
import type { CircuitBreakerOptions, Telemetry } from '@breakwater/core';
import { createRoutingChannel, idempotentMethods } from '@breakwater/grpc-js';
import { routingLink } from '@breakwater/trpc';
import { httpLink } from '@trpc/client';
import { afterEach, describe, expect, it } from 'vitest';
import { METRICS } from '../src/index.js';
import { counting, otelSdk } from './sdk.js';

const idempotent = idempotentMethods(loadEchoPackageDefinition());
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/**
 * A routing channel over a target whose connections are refused (`dead`: the
 * calls never reach it, the verdict's neverSent) and a live one, with a hedge
 * that never fires (it builds the second router inside, for calls not safe to repeat).
 */
async function deadAndLive(telemetry: Telemetry, circuit: CircuitBreakerOptions) {
  const dead = await startGrpcChaosServer({ replica: 'dead' });
  const live = await startGrpcChaosServer({ replica: 'live' });
  cleanup.push(() => Promise.all([dead.close(), live.close()]));
  await dead.stop();
  const channel = createRoutingChannel({
    targets: [
      { id: 'dead', address: dead.address },
      { id: 'live', address: live.address },
    ],
    // The dead target is tried first: the call fails over once.
    selection: 'priority',
    idempotent,
    hedge: { delayMs: 60_000, attempts: 2 },
    circuit,
    telemetry,
  });
  const client = createEchoClient('routed', { channelOverride: channel });
  cleanup.push(() => client.close());
  return { dead, live, channel, client };
}

describe('otelTelemetry through grpc-js createRoutingChannel (real chaos servers)', () => {
  it('a call failing over from a dead target to a live one: one failover, attempts as the servers saw them, targets and circuits told once', async () => {
    const sdk = otelSdk();
    const { told, counted } = counting(sdk.telemetry);
    const { dead, live, client } = await deadAndLive(counted, { failureThreshold: 100 });

    const safe = await echoUnary(client, {}, { callId: 'safe' });
    expect(safe.value?.replica).toBe('live');
    expect(await sdk.sum(METRICS.failovers)).toBe(1);
    expect(
      await sdk.sum(METRICS.failovers, {
        'breakwater.name': 'router',
        'breakwater.provider': 'dead',
        'error.type': 'UNAVAILABLE',
      }),
    ).toBe(1);
    const router = { 'breakwater.name': 'router' };
    // The live server saw the one successful attempt; the dead one saw none (refused).
    expect(live.attempts('safe')).toBe(1);
    expect(dead.total()).toBe(0);
    expect(await sdk.sum(METRICS.attempts, { ...router, 'breakwater.outcome': 'success' })).toBe(1);
    expect(await sdk.sum(METRICS.attempts, { ...router, 'breakwater.outcome': 'failure' })).toBe(1);
    expect(await sdk.histogram(METRICS.callDuration, router)).toMatchObject({ count: 1 });
    expect(await sdk.histogram(METRICS.callAttempts, router)).toEqual({ count: 1, sum: 2 });

    // A method not safe to repeat goes through the other router: still one report of the call.
    // Its channel to the dead target is in TRANSIENT_FAILURE by now, so that target goes last
    // and the call goes straight to the live one: no second failover.
    const unsafe = await echoUnary(client, {}, { callId: 'unsafe', method: 'UnaryUnsafe' });
    expect(unsafe.value?.replica).toBe('live');
    expect(live.attempts('unsafe')).toBe(1);
    expect(await sdk.sum(METRICS.failovers)).toBe(1);
    expect(await sdk.sum(METRICS.attempts)).toBe(live.total() + 1);
    expect(await sdk.histogram(METRICS.callDuration, router)).toMatchObject({ count: 2 });

    // Provider health and circuits: told once, one gauge point per target.
    expect(told.providers).toBe(1);
    expect(told.circuits.sort()).toEqual(['dead', 'live']);
    const health = (await sdk.collect()).get(METRICS.providerHealth) ?? [];
    expect(health.map((p) => [p.attributes['breakwater.provider'], p.value]).sort()).toEqual([
      ['dead', 1],
      ['live', 1],
    ]);
    const states = (await sdk.collect()).get(METRICS.circuitState) ?? [];
    expect(states.filter((p) => p.attributes['breakwater.circuit.state'] === 'closed')).toEqual([
      expect.objectContaining({
        value: 1,
        attributes: expect.objectContaining({ 'breakwater.name': 'dead' }),
      }),
      expect.objectContaining({
        value: 1,
        attributes: expect.objectContaining({ 'breakwater.name': 'live' }),
      }),
    ]);
  });

  it('a dead target whose circuit opens: the refusals and transitions, counted once', async () => {
    const sdk = otelSdk();
    const { live, client, channel } = await deadAndLive(sdk.telemetry, {
      failureSpanMs: 0,
      failureThreshold: 1,
      openDurationMs: 60_000,
    });
    for (const callId of ['c1', 'c2', 'c3']) {
      expect((await echoUnary(client, {}, { callId })).value?.replica).toBe('live');
    }
    expect(channel.circuit('dead')?.state).toBe('open');
    expect(
      await sdk.sum(METRICS.circuitTransitions, {
        'breakwater.name': 'dead',
        'breakwater.circuit.from': 'closed',
        'breakwater.circuit.to': 'open',
      }),
    ).toBe(1);
    expect(await sdk.gauge(METRICS.providerHealth, { 'breakwater.provider': 'dead' })).toBe(0);
    // The first call failed over from dead (its one failure opened the circuit); the others
    // skipped it and went straight to live.
    expect(await sdk.sum(METRICS.failovers)).toBe(1);
    expect(await sdk.sum(METRICS.attempts, { 'breakwater.outcome': 'success' })).toBe(live.total());
  });

  it('a bad telemetry throws at construction naming the option, with or without the second router', () => {
    const targets = [{ id: 'a', address: '127.0.0.1:1' }];
    for (const hedge of [undefined, { delayMs: 10, attempts: 2 }]) {
      expect(() =>
        createRoutingChannel({ targets, ...(hedge ? { hedge } : {}), telemetry: {} as never }),
      ).toThrow(/createRoutingChannel: telemetry\.startCall/);
      expect(() =>
        createRoutingChannel({
          targets,
          ...(hedge ? { hedge } : {}),
          telemetry: { startCall: () => undefined, providers: 1 } as never,
        }),
      ).toThrow(/telemetry\.providers/);
    }
    expect(() =>
      routingLink({
        endpoints: [{ id: 'a', link: httpLink({ url: 'http://127.0.0.1:1' }) }],
        hedge: { delayMs: 10, attempts: 2 },
        telemetry: { startCall: () => undefined, circuit: 'x' } as never,
      }),
    ).toThrow(/routingLink: telemetry\.circuit/);
  });
});
