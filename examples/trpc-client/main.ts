// Two tRPC servers; the primary goes down, comes back behind a proxy answering
// HTML 502, then recovers. The client routes around it without a failed query.
// Run: pnpm start (in this folder).
import { type ChaosTrpcRouter, createChaosTrpcServer } from '@breakwater/chaos';
import { isCircuitOpenError } from '@breakwater/core';
import { createStatusPreservingFetch, resilienceLink, routingLink } from '@breakwater/trpc';
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';

/** Runs the scenario; resolves with what the client saw per phase. */
export async function main(log: (line: string) => void = console.log) {
  const primary = await createChaosTrpcServer({ name: 'primary' });
  const secondary = await createChaosTrpcServer({ name: 'secondary' });
  const endpoint = (id: string, url: string) => ({
    id,
    link: httpBatchLink<ChaosTrpcRouter>({ url, fetch: createStatusPreservingFetch() }),
  });
  const client = createTRPCClient<ChaosTrpcRouter>({
    links: [
      // The standard stack with a 2 s deadline; routingLink below retries and fails over.
      resilienceLink({ timeoutMs: 2_000, retry: false }),
      routingLink({
        endpoints: [endpoint('primary', primary.url), endpoint('secondary', secondary.url)],
        selection: { type: 'priority', priorities: { primary: 1 } },
        protection: { circuit: { failureThreshold: 2, openDurationMs: 200 }, timeoutMs: 1000 },
      }),
    ],
  });

  const phases: Record<string, { ok: number; failed: number; servers: Record<string, number> }> =
    {};
  const phase = async (name: string, setup: () => Promise<void> | void) => {
    await setup();
    const seen = { ok: 0, failed: 0, servers: {} as Record<string, number> };
    for (let i = 0; i < 10; i++) {
      try {
        const { server } = await client.echo.query(`${name}-${i}`);
        seen.ok++;
        seen.servers[server] = (seen.servers[server] ?? 0) + 1;
      } catch (error) {
        seen.failed++;
        if (error instanceof TRPCClientError && isCircuitOpenError(error.cause)) {
          log(`refused by an open circuit, retry in ${error.cause.retryAfterMs} ms`);
        } else {
          log(`failed: ${(error as Error).message}`);
        }
      }
    }
    phases[name] = seen;
    log(`${name.padEnd(22)} ok ${seen.ok}  failed ${seen.failed}  ${JSON.stringify(seen.servers)}`);
  };

  try {
    await phase('healthy', () => {});
    await phase('primary down', () => primary.stop());
    await phase('primary HTML 502', async () => {
      primary.setFaults({ errorRate: 1, error: { type: 'html' } });
      await primary.start();
    });
    await phase('primary recovered', async () => {
      primary.setFaults({});
      // Wait out the cool-down so the recovery probe can go.
      await new Promise((r) => setTimeout(r, 250));
    });
    return phases;
  } finally {
    await Promise.all([primary.close(), secondary.close()]);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
}
