import { createHttpProbe } from '@breakwater/core/node';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { afterEach, describe, expect, it } from 'vitest';
import { expectSameDrawsPerCall } from '../test-helpers/same-draws.js';
import type { ChaosTrpcRouter } from './router.js';
import { type ChaosTrpcServer, createChaosTrpcServer, TRPC_HEALTH_PATH } from './server.js';

const servers: ChaosTrpcServer[] = [];
async function serve(options: Parameters<typeof createChaosTrpcServer>[0]) {
  const s = await createChaosTrpcServer(options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const echoUrl = (s: ChaosTrpcServer, i = 0) =>
  `${s.url}/echo?input=${encodeURIComponent(JSON.stringify(String(i)))}`;

describe('createChaosTrpcServer', () => {
  it('serves the router through httpBatchLink and records batch sizes and server name', async () => {
    const s = await serve({ name: 'a' });
    const client = createTRPCClient<ChaosTrpcRouter>({ links: [httpBatchLink({ url: s.url })] });
    const [a, b, n] = await Promise.all([
      client.echo.query('x'),
      client.echo.query('y'),
      client.counter.increment.mutate({ by: 2 }),
    ]);
    expect(a).toEqual({ value: 'x', server: 'a' });
    expect(b.value).toBe('y');
    expect(n).toBe(2);
    const stats = s.stats();
    expect(stats.procedures).toEqual({ echo: 2, 'counter.increment': 1 });
    expect(stats.batchSizes.sort()).toEqual([1, 2]);
    expect(stats.calls).toBe(3);
  });

  it('capacity: serves `workers` requests at once, queues the rest FIFO, answers 429 beyond a full queue, and serves a request whose client left (wasted)', async () => {
    const s = await serve({ capacity: { workers: 1, serviceMs: 60, queue: 1 } });
    const started = performance.now();
    const statuses = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const res = await fetch(echoUrl(s, i));
        await res.arrayBuffer();
        return { status: res.status, ms: performance.now() - started };
      }),
    );
    expect(statuses.map((r) => r.status)).toEqual([200, 200, 429]);
    // The second waited for the first: two services back to back.
    expect(Math.max(...statuses.map((r) => r.ms))).toBeGreaterThanOrEqual(115);
    expect(s.capacityStats()).toMatchObject({ served: 2, refused: 1, peakInFlight: 2 });

    s.setCapacity({ workers: 1, serviceMs: 80 });
    const first = fetch(echoUrl(s, 3)).then((r) => r.status);
    // Queued behind the first, its client gives up before a worker is free.
    const gaveUp = await fetch(echoUrl(s, 4), { signal: AbortSignal.timeout(30) }).catch(
      (e: unknown) => (e as Error).name,
    );
    expect(gaveUp).toBe('TimeoutError');
    expect(await first).toBe(200);
    await expect.poll(() => s.capacityStats().served, { timeout: 2_000 }).toBe(4);
    expect(s.capacityStats()).toMatchObject({ wasted: 1, queued: 0, busy: 0 });
    s.resetStats();
    expect(s.capacityStats()).toMatchObject({ served: 0, refused: 0, peakInFlight: 0 });
  });

  it('answers CORS preflights itself (not counted) when cors is on, and only then', async () => {
    const preflight = (url: string) =>
      fetch(`${url}/echo`, {
        method: 'OPTIONS',
        headers: { origin: 'http://page.test', 'access-control-request-headers': 'x-call-id' },
      });
    const open = await serve({ cors: true });
    const res = await preflight(open.url);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')).toBe('x-call-id');
    const query = await fetch(`${open.url}/echo?input=${encodeURIComponent('"x"')}`);
    expect(query.headers.get('access-control-allow-origin')).toBe('*');
    expect(open.stats().requests).toBe(1);

    const closed = await serve({});
    expect((await preflight(closed.url)).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gives every client the same faults for the same call index and attempt, and a retry its own draw', async () => {
    const s = await serve({ faults: { errorRate: 0.5 }, seed: 5 });
    const failedOf = (lane: string) =>
      Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const res = await fetch(echoUrl(s, i), { headers: { 'x-call-id': `${lane}-${i}` } });
          await res.arrayBuffer();
          return res.status === 503;
        }),
      );
    await expectSameDrawsPerCall(
      ['trpc/none', 'trpc/breakwater'],
      failedOf,
      (id) => s.stats().attempts[id] ?? 0,
    );
  });

  it('fails 30% of 1000 requests within tolerance', async () => {
    const s = await serve({ faults: { errorRate: 0.3 }, seed: 7 });
    let failed = 0;
    for (let i = 0; i < 1000; i += 50) {
      const batch = await Promise.all(
        Array.from({ length: 50 }, (_, j) => fetch(echoUrl(s, i + j)).then((r) => r.status)),
      );
      failed += batch.filter((st) => st === 503).length;
    }
    // Binomial(1000, 0.3): sd ≈ 14.5, so ±60 is beyond 4 sd.
    expect(failed).toBeGreaterThan(240);
    expect(failed).toBeLessThan(360);
    expect(s.stats().faults.error).toBe(failed);
    expect(s.stats().requests).toBe(1000);
  });

  it('fails the first k attempts per call id, with Retry-After, then answers', async () => {
    const s = await serve({
      faults: { failFirst: 2, error: { type: 'status', retryAfterSeconds: 3 } },
    });
    const get = () => fetch(echoUrl(s), { headers: { 'x-call-id': 'c1' } });
    const r1 = await get();
    expect(r1.status).toBe(503);
    expect(r1.headers.get('retry-after')).toBe('3');
    const body = (await r1.json()) as { error: { data: { code: string; httpStatus: number } } };
    expect(body.error.data).toMatchObject({ code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
    expect((await get()).status).toBe(503);
    expect((await get()).status).toBe(200);
    expect(s.stats().attempts.c1).toBe(3);
  });

  it('answers like a proxy with an HTML 502 that tRPC cannot parse', async () => {
    const s = await serve({ faults: { errorRate: 1, error: { type: 'html' } } });
    const client = createTRPCClient<ChaosTrpcRouter>({ links: [httpBatchLink({ url: s.url })] });
    const error = await client.echo.query('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TRPCClientError);
    // The fact the adapter's status-preserving fetch exists for.
    expect((error as TRPCClientError<ChaosTrpcRouter>).meta).toBeUndefined();
    const res = await fetch(echoUrl(s));
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('502 Bad Gateway');
  });

  it('adds latency with the configured quantiles (virtual sleep records the draws)', async () => {
    const delays: number[] = [];
    const sleep = (ms: number) => {
      delays.push(ms);
      return Promise.resolve();
    };
    const s = await serve({
      faults: { latency: { kind: 'tail', baseMs: 10, percent: 5, extraMs: 300 } },
      sleep,
      seed: 3,
    });
    for (let i = 0; i < 1000; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) => fetch(echoUrl(s, i + j)).then((r) => r.text())),
      );
    }
    delays.sort((a, b) => a - b);
    const q = (p: number) => delays[Math.floor(p * (delays.length - 1))] as number;
    expect(delays).toHaveLength(1000);
    expect(q(0.5)).toBe(10);
    expect(q(0.9)).toBe(10);
    expect(q(0.99)).toBe(310);
    const tail = delays.filter((d) => d === 310).length;
    expect(tail).toBeGreaterThan(25);
    expect(tail).toBeLessThan(80);
  });

  it('draws uniform latency inside its range and really waits', async () => {
    const s = await serve({ faults: { latency: { kind: 'uniform', minMs: 20, maxMs: 40 } } });
    const start = performance.now();
    await fetch(echoUrl(s)).then((r) => r.text());
    const took = performance.now() - start;
    expect(took).toBeGreaterThanOrEqual(19);
    expect(s.stats().faults.delayed).toBe(1);
  });

  it('stops (connection refused) and restarts on the same port', async () => {
    const s = await serve({});
    const port = s.port;
    expect((await fetch(echoUrl(s))).status).toBe(200);
    await s.stop();
    expect(s.listening).toBe(false);
    const refused = await fetch(echoUrl(s)).catch(
      (e: { cause?: { code?: string } }) => e.cause?.code,
    );
    expect(refused).toBe('ECONNREFUSED');
    await s.start();
    expect(s.port).toBe(port);
    expect((await fetch(echoUrl(s))).status).toBe(200);
  });

  it('hangs requests until the client gives up, and stop() releases them', async () => {
    const s = await serve({ faults: { hangRate: 1 } });
    const ac = new AbortController();
    const pending = fetch(echoUrl(s), { signal: ac.signal }).catch((e: Error) => e.name);
    await new Promise((r) => setTimeout(r, 30));
    ac.abort();
    expect(await pending).toBe('AbortError');
    expect(s.stats().faults.hang).toBe(1);
    const second = fetch(echoUrl(s)).catch(() => 'closed');
    await new Promise((r) => setTimeout(r, 30));
    await s.stop();
    expect(await second).toBe('closed');
  });

  it('scripts each attempt of a call and records what became of every request', async () => {
    const s = await serve({
      faults: {
        steps: [
          { error: { type: 'status', status: 503, retryAfterSeconds: 'soon' } },
          { hang: true },
        ],
        errorRate: 1,
        error: { type: 'html' },
      },
    });
    const get = (signal?: AbortSignal) =>
      fetch(echoUrl(s), { headers: { 'x-call-id': 's1' }, ...(signal ? { signal } : {}) });
    const first = await get();
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('soon');
    const ac = new AbortController();
    const hung = get(ac.signal).catch((e: Error) => e.name);
    await expect.poll(() => s.stats().requests).toBe(2);
    ac.abort();
    expect(await hung).toBe('AbortError');
    expect((await get()).status).toBe(502); // after the script: the rest of the plan
    await expect
      .poll(() => s.stats().observed.map((o) => [o.attempt, o.outcome, o.httpStatus]))
      .toEqual([
        [1, 'answered', 503],
        [2, 'cancelled', undefined],
        [3, 'answered', 502],
      ]);
    expect(s.stats().observed[0]).toMatchObject({ callId: 's1', paths: ['echo'] });
  });

  it('validates the fault plan', async () => {
    await expect(createChaosTrpcServer({ faults: { errorRate: 2 } })).rejects.toThrow(/errorRate/);
    const s = await serve({});
    expect(() => s.setFaults({ latency: { kind: 'uniform', minMs: 5, maxMs: 1 } })).toThrow(
      /maxMs/,
    );
  });

  it('/healthz: SERVING 200, NOT_SERVING 503 while the plan says notServing, pushed to watchers; not counted', async () => {
    const s = await serve({ name: 'h' });
    const reports: string[] = [];
    const ac = new AbortController();
    const watch = createHttpProbe({ watch: true }).watch;
    const ended = watch?.(`${s.url}${TRPC_HEALTH_PATH}`, {
      provider: 'h',
      signal: ac.signal,
      report: (healthy, reason) => reports.push(`${healthy}:${reason}`),
    });
    ended?.catch(() => {});
    await expect.poll(() => reports).toEqual(['true:SERVING']);
    expect((await fetch(`${s.url}${TRPC_HEALTH_PATH}`)).status).toBe(200);
    s.setFaults({ errorRate: 1, notServing: true });
    await expect.poll(() => reports).toEqual(['true:SERVING', 'false:NOT_SERVING']);
    const down = await fetch(`${s.url}${TRPC_HEALTH_PATH}`);
    expect([down.status, await down.text()]).toEqual([503, 'NOT_SERVING']);
    // A plan with the same health pushes nothing.
    s.setFaults({ errorRate: 0.5, notServing: true });
    s.setFaults({});
    await expect.poll(() => reports).toHaveLength(3);
    expect(reports[2]).toBe('true:SERVING');
    ac.abort();
    expect(s.stats().calls).toBe(0);
    expect(() => s.setFaults({ notServing: 'yes' as never })).toThrow(/faults.notServing/);
  });
});
