import type { Probe } from '@breakwater/core';
import { createHttpProbe } from '@breakwater/core/node';
import { TRPC_HEALTH_PATH } from './server.js';

/**
 * The chaos tRPC servers' `/healthz` as a `routingLink` health probe (whose
 * target is an endpoint's link, so the URL comes from the provider id):
 * watched as an event stream (`createHttpProbe({ watch: true })`), each pushed
 * status recorded at once; polled only where a server cannot be watched.
 */
export function chaosTrpcHealthProbe(
  servers: ReadonlyArray<{ id: string; url: string }>,
): Probe<unknown> {
  const http = createHttpProbe({ watch: true });
  const urls = new Map(servers.map((s) => [s.id, `${s.url}${TRPC_HEALTH_PATH}`]));
  const urlOf = (provider: string) => urls.get(provider) ?? 'invalid:';
  const watch = http.watch;
  return Object.assign(
    (_link: unknown, ctx: Parameters<typeof http>[1]) => http(urlOf(ctx.provider), ctx),
    watch === undefined
      ? {}
      : {
          watch: (_link: unknown, ctx: Parameters<typeof watch>[1]) =>
            watch(urlOf(ctx.provider), ctx),
        },
  );
}
