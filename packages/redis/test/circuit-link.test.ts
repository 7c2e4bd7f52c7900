import { systemSleep } from '@breakwater/core/time';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisCircuitBreaker } from '../src/index.js';
import { startRedisServer } from './redis-server.js';

// What a fleet circuit says about its link when Redis dies or refuses it. Each
// test has its own redis-server: one is killed, one wants a password.

/** Whether `check` holds within about 10 s (a reconnect after a restart takes ioredis's backoff, longer on a loaded host). */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 2_500 && !check(); i++) await systemSleep(4);
  return check();
}

/** How `promise` settled within `ms`: its value, its error, or `'pending'`. */
function within(promise: Promise<unknown>, ms: number): Promise<unknown> {
  return Promise.race([
    promise.then(
      () => 'resolved',
      (error: unknown) => error,
    ),
    systemSleep(ms).then(() => 'pending'),
  ]);
}

function connect(port: number, password?: string, reconnectMs = 50): Redis {
  const client = new Redis({
    port,
    host: '127.0.0.1',
    enableOfflineQueue: false,
    retryStrategy: () => reconnectMs,
    ...(password === undefined ? {} : { password }),
  });
  client.on('error', () => {});
  return client;
}

describe('fleet circuit link', () => {
  it('reports local once Redis dies, with no round trip needed (its probe then goes alone), and shared after a round trip on reconnect', async () => {
    const server = await startRedisServer();
    const client = connect(server.port);
    const admin = connect(server.port);
    const circuit = createRedisCircuitBreaker({
      client,
      name: 'dies',
      breaker: { failureSpanMs: 0, failureThreshold: 2, openDurationMs: 50 },
    });
    try {
      // Nothing is known to be shared before Redis has answered.
      expect(circuit.linkStats().mode).toBe('local');
      await circuit.ready;
      expect(circuit.linkStats().mode).toBe('shared');
      await server.kill();
      expect(await eventually(() => circuit.linkStats().mode === 'local')).toBe(true);
      expect(circuit.linkStats().fallbacks).toBe(1);
      // Its own breaker decides alone: after the cool-down, its probe is let through at once.
      for (let i = 0; i < 2; i++) circuit.release(circuit.tryAcquire(), { outcome: 'failure' });
      expect(circuit.state).toBe('open');
      await systemSleep(60);
      expect(circuit.tryAcquire()).toBeGreaterThanOrEqual(0);
      await server.restart();
      expect(await eventually(() => circuit.linkStats().mode === 'shared')).toBe(true);
      expect(circuit.linkStats().resumes).toBe(1);
      // The server has the circuit's subscriber listening again.
      await eventually(() => admin.status === 'ready');
      expect(await admin.pubsub('NUMSUB', 'breakwater:{dies}:circuit')).toEqual([
        'breakwater:{dies}:circuit',
        1,
      ]);
    } finally {
      await circuit.close();
      client.disconnect();
      admin.disconnect();
      await server.stop();
    }
  });

  it('reads the fleet state again when the subscriber is back before the command client (joins the fleet with no call)', async () => {
    const server = await startRedisServer();
    // The command client reconnects slowly, the subscriber at once: the
    // subscriber's first catch-up read finds the command client still away.
    const client = connect(server.port, undefined, 400);
    const subscriber = connect(server.port);
    const circuit = createRedisCircuitBreaker({ client, subscriber, name: 'race', retryMs: 50 });
    try {
      await circuit.ready;
      await server.kill();
      expect(await eventually(() => circuit.linkStats().mode === 'local')).toBe(true);
      await server.restart();
      expect(await eventually(() => circuit.linkStats().mode === 'shared')).toBe(true);
      expect(circuit.linkStats().resumes).toBe(1);
    } finally {
      await circuit.close();
      client.disconnect();
      subscriber.disconnect();
      await server.stop();
    }
  });

  it('with a wrong password, ready rejects naming the cause (not the password) and the breaker decides locally', async () => {
    const server = await startRedisServer(['--requirepass', 'right-secret']);
    const client = connect(server.port, 'wrong-secret');
    const admin = connect(server.port, 'right-secret');
    const circuit = createRedisCircuitBreaker({ client, name: 'auth' });
    // Nobody awaits this one's `ready`: its rejection must not be unhandled.
    const unwatched = createRedisCircuitBreaker({ client, name: 'unwatched' });
    try {
      const outcome = await within(circuit.ready, 3000);
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(
        /^createRedisCircuitBreaker: circuit "auth" cannot listen to Redis: WRONGPASS/,
      );
      expect((outcome as Error).message).not.toContain('secret');
      expect(circuit.linkStats().mode).toBe('local');
      expect(circuit.tryAcquire()).toBeGreaterThanOrEqual(0);
      // The server never had a subscriber on the circuit's channel.
      await eventually(() => admin.status === 'ready');
      expect(await admin.pubsub('NUMSUB', 'breakwater:{auth}:circuit')).toEqual([
        'breakwater:{auth}:circuit',
        0,
      ]);
      expect(await within(unwatched.ready, 1000)).toBeInstanceOf(Error);
    } finally {
      await circuit.close();
      await unwatched.close();
      client.disconnect();
      admin.disconnect();
      await server.stop();
    }
  });
});
