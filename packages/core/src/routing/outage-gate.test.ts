import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import type { CircuitBreaker } from '../breaker/types.js';
import { isRoutingError } from '../errors/routing-error.js';
import { createManualClock } from '../time/manual-clock.js';
import { createRouter } from './router.js';
import { call, type FakeResource, fake, setup } from './test-helpers/fake-providers.js';
import type { RouterOptions } from './types.js';

const INTERVAL = 200;
const circuit = { failureSpanMs: 0, failureThreshold: 1, openDurationMs: INTERVAL };
const IDS = ['a', 'b', 'c'];

type Setup = ReturnType<typeof setup>;
const run = (router: Setup['router']) => router.execute((r, ctx) => call(r, ctx));

/** Every call the providers receive, as [clock time, provider id]. */
function record(s: Setup): [number, string][] {
  const log: [number, string][] = [];
  for (const id of IDS) {
    const r = s.res[id] as FakeResource;
    r.behave = async () => {
      log.push([s.clock(), id]);
      throw new Error(`${id} down`);
    };
  }
  return log;
}

/** Opens all three circuits at once: one request fails over a → b → c, each failing. */
async function outage(s: Setup): Promise<[number, string][]> {
  const log = record(s);
  await s.clock.run(run(s.router)).catch(() => {});
  for (const id of IDS) expect(s.router.circuit(id)?.state).toBe('open');
  log.length = 0;
  return log;
}

/** Offers `rate` requests a second for `ms` of virtual time; returns their outcomes. */
async function offer(s: Setup, ms: number, rate = 25): Promise<string[]> {
  const out: string[] = [];
  const step = 1000 / rate;
  for (let t = 0; t < ms; t += step) {
    await s.clock.advanceAsync(step);
    out.push(await s.clock.run(run(s.router)).catch((e) => (isRoutingError(e) ? 'refused' : 'x')));
  }
  return out;
}

const shapes: [string, Omit<RouterOptions<FakeResource>, 'providers'>][] = [
  ['priority', { protection: { circuit } }],
  ['round-robin', { protection: { circuit }, selection: 'round-robin' }],
  ['hedged (parallel traversal)', { protection: { circuit }, hedge: { delayMs: 150 } }],
  ['retries on', { protection: { circuit, retry: { attempts: 3, backoff: { baseDelayMs: 0 } } } }],
];

describe('router: the outage gate (every provider ejected)', () => {
  it.each(shapes)(
    '%s: at most one probe per interval across all providers, rotating, never failed over',
    async (_name, options) => {
      const s = setup(IDS, options);
      const log = await outage(s);
      const outcomes = await offer(s, 10_000);
      expect(outcomes.every((o) => o === 'refused')).toBe(true);
      // 250 requests; the circuits alone would have sent 15 probes a second (150), the
      // old panic rule 25 more, and failovers after each failed probe.
      expect(log.length).toBeGreaterThanOrEqual(40);
      expect(log.length).toBeLessThanOrEqual(10_000 / INTERVAL);
      for (let i = 1; i < log.length; i++) {
        expect(
          (log[i] as [number, string])[0] - (log[i - 1] as [number, string])[0],
        ).toBeGreaterThanOrEqual(INTERVAL);
      }
      // Rotation: a, b, c, a, b, c, ... whatever the selection order.
      const order = log.map(([, id]) => id);
      expect(order.slice(0, 6)).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
      for (const id of IDS) {
        expect(Math.abs(order.filter((x) => x === id).length - log.length / 3)).toBeLessThanOrEqual(
          1,
        );
      }
    },
  );

  it('the first probe goes one interval after the last circuit opened, not at once', async () => {
    const s = setup(IDS, { protection: { circuit } });
    const log = await outage(s);
    await s.clock.advanceAsync(INTERVAL - 1);
    await expect(run(s.router)).rejects.toSatisfy(isRoutingError);
    expect(log).toEqual([]);
    await s.clock.advanceAsync(1);
    await expect(run(s.router)).rejects.toSatisfy(isRoutingError);
    expect(log.map(([, id]) => id)).toEqual(['a']);
  });

  it('the upstream recovers: the next probe (within one interval) succeeds and traffic flows at once', async () => {
    const s = setup(IDS, { protection: { circuit }, selection: 'round-robin' });
    await outage(s);
    await offer(s, 3_000);
    for (const id of IDS) (s.res[id] as FakeResource).behave = async () => `ok:${id}`;
    const outcomes = await offer(s, 1_000);
    const first = outcomes.findIndex((o) => o.startsWith('ok:'));
    // 25 requests a second: a request every 40 ms, the probe within 200 ms of recovery.
    expect(first).toBeGreaterThanOrEqual(0);
    expect((first + 1) * 40).toBeLessThanOrEqual(INTERVAL + 40);
    expect(outcomes.slice(first).every((o) => o.startsWith('ok:'))).toBe(true);
  });

  it('only one provider recovers: the rotation finds it within one round of probes, then the others probe on their own', async () => {
    for (const up of IDS) {
      const s = setup(IDS, { protection: { circuit }, selection: 'round-robin' });
      const log = await outage(s);
      await offer(s, 1_000);
      const r = s.res[up] as FakeResource;
      r.behave = async () => `ok:${up}`;
      const outcomes = await offer(s, IDS.length * INTERVAL + 40);
      // The panic rule still routes: the provider that answers is found within one rotation.
      expect(outcomes).toContain(`ok:${up}`);
      expect(s.router.circuit(up)?.state).toBe('closed');
      // Not everything is ejected any more: every request goes to it, the others' circuits
      // probe at their own cadence (one probe each per interval).
      log.length = 0;
      const after = await offer(s, 1_000);
      expect(after.every((o) => o === `ok:${up}`)).toBe(true);
      for (const id of IDS.filter((x) => x !== up)) {
        const probes = log.filter(([, x]) => x === id).length;
        expect(probes).toBeGreaterThanOrEqual(3);
        expect(probes).toBeLessThanOrEqual(1_000 / INTERVAL);
      }
    }
  });

  it('a health signal (the circuit half-opened early) lets that provider probe at once, ahead of the cadence', async () => {
    const s = setup(IDS, { protection: { circuit: { ...circuit, openDurationMs: 1_000 } } });
    const log = await outage(s);
    // Half-way through c's open duration: the gate's first probe is not due yet.
    await offer(s, 500);
    const before = log.length;
    (s.res.c as FakeResource).behave = async () => 'ok:c';
    // What the grpc-js routing channel does when c's channel is READY again.
    s.router.circuit('c')?.halfOpen();
    await s.clock.advanceAsync(1);
    await expect(run(s.router)).resolves.toBe('ok:c');
    expect(log.length).toBe(before);
    expect(s.router.circuit('c')?.state).toBe('closed');
  });

  it('a health signal reaches a circuit left half-open by probes that found no connection', async () => {
    // The gRPC case: while the server is stopped, each outage probe fails at once without a
    // connection (neverSent), which says nothing about the provider: the probe is neutral and
    // the circuit stays half-open. A later signal (the channel READY again) changes no state,
    // yet must let the probe go at once, not at the next turn of the cadence.
    const s = setup(IDS, {
      protection: { circuit },
      classify: () => ({ retry: false, failover: true, neverSent: true }),
    });
    const log = await outage(s);
    await offer(s, 3 * INTERVAL + 10);
    expect(log.length).toBeGreaterThanOrEqual(3);
    expect(IDS.some((id) => s.router.circuit(id)?.state === 'half-open')).toBe(true);
    const half = IDS.find((id) => s.router.circuit(id)?.state === 'half-open') as string;
    // Just after a probe: the cadence's next turn is ~200 ms away.
    const before = log.length;
    (s.res[half] as FakeResource).behave = async () => `ok:${half}`;
    s.router.signalHealthy(half);
    await s.clock.advanceAsync(1);
    await expect(run(s.router)).resolves.toBe(`ok:${half}`);
    expect(log.length).toBe(before);
    expect(s.router.circuit(half)?.state).toBe('closed');
  });

  it('signalHealthy: an unknown provider is a TypeError; a closed circuit stays closed', () => {
    const s = setup(IDS, { protection: { circuit } });
    expect(() => s.router.signalHealthy('nope')).toThrow(
      /signalHealthy\(providerId\): unknown provider "nope"/,
    );
    s.router.signalHealthy('a');
    expect(s.router.circuit('a')?.state).toBe('closed');
  });

  it('routers over the same circuits (an adapter twin) share one cadence', async () => {
    const clock = createManualClock(1_000_000);
    const res: Record<string, FakeResource> = {};
    const log: string[] = [];
    for (const id of IDS) {
      res[id] = fake(id, clock);
      (res[id] as FakeResource).behave = async () => {
        log.push(id);
        throw new Error('down');
      };
    }
    const breakers = IDS.map((id) => createCircuitBreaker({ ...circuit, name: id, clock }));
    const make = () =>
      createRouter<FakeResource>({
        providers: IDS.map((id, i) => ({
          id,
          resource: res[id] as FakeResource,
          protection: { circuit: breakers[i] as CircuitBreaker },
        })),
        clock,
        sleep: clock.sleep,
      });
    const one = make();
    const two = make();
    for (const b of breakers) b.trip();
    for (let t = 0; t < 2_000; t += 20) {
      await clock.advanceAsync(20);
      await clock.run(one.execute((r, ctx) => call(r, ctx))).catch(() => {});
      await clock.run(two.execute((r, ctx) => call(r, ctx))).catch(() => {});
    }
    expect(log.length).toBeLessThanOrEqual(2_000 / INTERVAL);
  });

  it('panic: false leaves each circuit to probe on its own', async () => {
    const s = setup(IDS, { protection: { circuit }, panic: false });
    const log = await outage(s);
    await offer(s, 1_000);
    // Three circuits, five probes a second each (a failed probe fails over to the next).
    expect(log.length).toBeGreaterThan(1_000 / INTERVAL);
  });
});
