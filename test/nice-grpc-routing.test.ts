import { loadEchoPackageDefinition } from '@breakwater/chaos';
import { createRoutingChannel, idempotentMethods } from '@breakwater/grpc-js';
import { resilienceMiddleware } from '@breakwater/nice-grpc';
import { createClientFactory } from 'nice-grpc';
import { describe, expect, it } from 'vitest';
// The nice-grpc package's own test helpers: the two adapters meet only here, in the
// integration tests, because @breakwater/nice-grpc does not depend on @breakwater/grpc-js.
import {
  callId,
  chaosServer,
  echoDefinition,
  onCleanup,
} from '../packages/nice-grpc/test/helpers.js';

describe('a nice-grpc client over the grpc-js routing channel', () => {
  it('primary killed mid-run: zero failed idempotent calls, the secondary takes over, deadlines still reach the servers', async () => {
    const primary = await chaosServer({ replica: 'primary' });
    const secondary = await chaosServer({ replica: 'secondary' });
    const channel = createRoutingChannel({
      targets: [
        { id: 'primary', address: primary.address },
        { id: 'secondary', address: secondary.address },
      ],
      idempotent: idempotentMethods(loadEchoPackageDefinition()),
      // A primary and its standby: registration order, not the load-aware default.
      selection: 'priority',
      circuit: { failureThreshold: 1, openDurationMs: 60_000 },
    });
    onCleanup(() => channel.close());
    const client = createClientFactory()
      .use(resilienceMiddleware({ timeoutMs: 2_000 }))
      .create(echoDefinition(), channel);

    const replicas: string[] = [];
    let failed = 0;
    for (let i = 0; i < 40; i++) {
      if (i === 20) await primary.stop();
      try {
        replicas.push((await client.Unary({ message: String(i) }, callId(`r${i}`))).replica);
      } catch {
        failed++;
      }
    }
    expect(failed).toBe(0);
    expect(replicas.slice(0, 20).every((r) => r === 'primary')).toBe(true);
    expect(replicas.slice(20).every((r) => r === 'secondary')).toBe(true);
    expect(secondary.total()).toBeGreaterThanOrEqual(20);
    for (const seen of [...primary.observed, ...secondary.observed]) {
      expect(seen.deadlineRemainingMs).toBeLessThanOrEqual(2_000);
    }
  });
});
