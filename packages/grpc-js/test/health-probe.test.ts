import { startGrpcChaosServer } from '@breakwater/chaos';
import { runProbe } from '@breakwater/core/internal';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { describe, expect, it, vi } from 'vitest';
import { createGrpcHealthProbe } from '../src/health.js';

describe('grpcHealthProbe', () => {
  it('SERVING is healthy; NOT_SERVING and a dead server are not', async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    const ctx = { provider: 'a', signal: new AbortController().signal };
    try {
      expect(await runProbe(probe, server.address, ctx)).toEqual({
        healthy: true,
        reason: 'SERVING',
      });
      server.setHealth('NOT_SERVING');
      expect(await runProbe(probe, server.address, ctx)).toEqual({
        healthy: false,
        reason: 'NOT_SERVING',
      });
      await server.stop();
      expect((await runProbe(probe, server.address, ctx)).healthy).toBe(false);
    } finally {
      probe.close();
      await server.close();
    }
  });

  it('sees a replica healthy soon after it comes back from an outage of seconds', async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    const ctx = { provider: 'a', signal: new AbortController().signal };
    const wait = sleepMs;
    try {
      expect((await runProbe(probe, server.address, ctx)).healthy).toBe(true);
      await server.stop();
      // Probe through ~6 s of outage: grpc-js's default reconnect backoff (1 s, x1.6)
      // would put the next connection attempt ~9 s after the kill.
      for (let i = 0; i < 12; i++) {
        expect((await runProbe(probe, server.address, ctx)).healthy).toBe(false);
        await wait(500);
      }
      await server.restart();
      const back = performance.now();
      let healthy = false;
      while (!healthy && performance.now() - back < 5000) {
        healthy = (await runProbe(probe, server.address, ctx)).healthy;
        if (!healthy) await wait(100);
      }
      expect(healthy).toBe(true);
      expect(performance.now() - back).toBeLessThan(1500);
    } finally {
      probe.close();
      await server.close();
    }
  }, 20_000);
});

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('grpcHealthProbe: Health/Watch', () => {
  /** Starts the probe's watch on `address`, collecting reports; `ac` ends it. */
  function watchOn(probe: ReturnType<typeof createGrpcHealthProbe>, address: string) {
    const reports: string[] = [];
    const ac = new AbortController();
    const watch = probe.watch;
    if (watch === undefined) throw new Error('the probe does not watch');
    const ended = watch(address, {
      provider: 'a',
      signal: ac.signal,
      report: (healthy, reason) => reports.push(`${healthy}:${reason}`),
    });
    return { reports, ac, ended };
  }

  it('pushes every status the server sets, and ends when its signal aborts', async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    try {
      const { reports, ac, ended } = watchOn(probe, server.address);
      await vi.waitFor(() => expect(reports).toEqual(['true:SERVING']));
      server.setHealth('NOT_SERVING', '');
      await vi.waitFor(() => expect(reports).toHaveLength(2));
      server.setHealth('SERVING', '');
      await vi.waitFor(() => expect(reports).toHaveLength(3));
      expect(reports).toEqual(['true:SERVING', 'false:NOT_SERVING', 'true:SERVING']);
      ac.abort(new Error('stopped'));
      await expect(ended).rejects.toThrow('stopped');
      server.setHealth('NOT_SERVING', '');
      await sleepMs(50);
      expect(reports).toHaveLength(3);
    } finally {
      probe.close();
      await server.close();
    }
  });

  it("fails when the server goes away, and resolves 'unsupported' on a server without Watch", async () => {
    const server = await startGrpcChaosServer();
    const probe = createGrpcHealthProbe();
    const bare = new Server();
    bare.addService(healthService as never, {
      check: (_call: unknown, cb: (e: null, r: { status: string }) => void) =>
        cb(null, { status: 'SERVING' }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      bare.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) =>
        e ? reject(e) : resolve(p),
      ),
    );
    try {
      const { reports, ended } = watchOn(probe, server.address);
      await vi.waitFor(() => expect(reports).toEqual(['true:SERVING']));
      await server.stop();
      // The stopping server cancels the stream (or the connection drops first).
      const error = await ended.then(
        () => undefined,
        (e: { code: number }) => e,
      );
      expect([status.CANCELLED, status.UNAVAILABLE]).toContain(error?.code);
      await expect(watchOn(probe, `127.0.0.1:${port}`).ended).resolves.toBe('unsupported');
    } finally {
      probe.close();
      bare.forceShutdown();
      await server.close();
    }
  });

  it('watch: false polls only; a bad watch option names it', () => {
    expect(createGrpcHealthProbe({ watch: false }).watch).toBeUndefined();
    expect(createGrpcHealthProbe().watch).toBeTypeOf('function');
    expect(() => createGrpcHealthProbe({ watch: 'yes' as never })).toThrow(
      /watch must be a boolean, got "yes"/,
    );
  });
});
