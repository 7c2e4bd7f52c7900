import { type ChaosTrpcRouter, chaosTrpcHealthProbe, type ScenarioClient } from '@breakwater/chaos';
import {
  createRetryBudget,
  isRoutingError,
  STANDARD_RESILIENCE,
  type Telemetry,
} from '@breakwater/core';
import { createStatusPreservingFetch, routingLink } from '@breakwater/trpc';
import {
  createTRPCClient,
  httpLink,
  type Operation,
  TRPCClientError,
  type TRPCLink,
  retryLink as trpcRetryLink,
} from '@trpc/client';
import { CALL_DEADLINE_MS } from './lanes.js';

type Client = ReturnType<typeof createTRPCClient<ChaosTrpcRouter>>;

// Every request names its logical call, so the servers count its attempts.
const callIdHeader = ({ op }: { op: Operation }) => ({
  'x-call-id': String((op.context as { callId?: unknown }).callId ?? ''),
});

/**
 * Round-robin over several terminating links, with no health checks: what
 * DNS round-robin (or a load balancer without health checks) gives a tRPC client.
 */
function roundRobinLink(links: readonly TRPCLink<ChaosTrpcRouter>[]): TRPCLink<ChaosTrpcRouter> {
  return (runtime) => {
    const ready = links.map((l) => l(runtime));
    let next = 0;
    return (opts) => {
      const link = ready[next++ % ready.length];
      if (!link) throw new Error('roundRobinLink needs at least one link');
      return link(opts);
    };
  };
}

function lane(name: string, client: Client): ScenarioClient {
  return {
    name,
    async call({ callId, index }) {
      const out = await client.echo.query(String(index), {
        context: { callId },
        signal: AbortSignal.timeout(CALL_DEADLINE_MS),
      });
      return { replica: out.server };
    },
    describeError(e) {
      const wrapped = e as { meta?: { routing?: unknown }; cause?: unknown };
      const routing = wrapped.meta?.routing ?? wrapped.cause;
      if (isRoutingError(routing)) {
        // e.g. "ROUTED(failed SERVICE_UNAVAILABLE, skipped circuit-open)"
        return `ROUTED(${routing.visits
          .map((v) => (v.status === 'skipped' ? `skipped ${v.reason}` : 'failed'))
          .join(', ')})`;
      }
      if (e instanceof TRPCClientError) {
        const data = e.data as { code?: string } | undefined;
        if (data?.code) return data.code;
        if (/abort/i.test(e.message)) return 'ABORTED';
        return /fetch failed/.test(e.message) ? 'NETWORK' : e.message.slice(0, 40);
      }
      return (e as Error)?.name ?? 'error';
    },
  };
}

/** Builds the three tRPC lanes: no resilience, tRPC's own retryLink, Breakwater (reporting to `telemetry`, when given). */
export function createTrpcLanes(
  servers: ReadonlyArray<{ id: string; url: string }>,
  telemetry?: Telemetry,
): {
  lanes: ScenarioClient[];
} {
  const plain = () => servers.map((s) => httpLink({ url: s.url, headers: callIdHeader }));
  const none = createTRPCClient<ChaosTrpcRouter>({ links: [roundRobinLink(plain())] });
  // tRPC's retryLink as its docs suggest: queries only, 3 attempts in all,
  // exponential delay (started at 100 ms here so it fits the 1 s deadline).
  const usual = createTRPCClient<ChaosTrpcRouter>({
    links: [
      trpcRetryLink({
        retry: ({ op, error, attempts }) => {
          const status = (error.data as { httpStatus?: number } | undefined)?.httpStatus ?? 0;
          return op.type === 'query' && attempts < 3 && !(status >= 400 && status < 500);
        },
        retryDelayMs: (attempt) => Math.min(100 * 2 ** attempt, 1_000),
      }),
      roundRobinLink(plain()),
    ],
  });
  // Breakwater: the core router over both servers as routingLink's docs set
  // it up — round-robin, the standard circuit per server
  // (STANDARD_RESILIENCE.circuit: a server whose circuit is open gets no calls
  // but one probe every 200 ms), the servers' health endpoints watched (a
  // pushed SERVING half-opens a circuit at once), failover, hedging of queries
  // slower than 150 ms, and a retry budget that caps hedges.
  const breakwater = createTRPCClient<ChaosTrpcRouter>({
    links: [
      routingLink<ChaosTrpcRouter>({
        endpoints: servers.map((s) => ({
          id: s.id,
          link: httpLink({
            url: s.url,
            headers: callIdHeader,
            fetch: createStatusPreservingFetch(),
          }),
        })),
        selection: 'round-robin',
        hedge: { delayMs: 150, attempts: 2 },
        protection: { circuit: STANDARD_RESILIENCE.circuit },
        // The router's registry only records (as the gRPC routing channel's does): a
        // consulted count of failures in a row would be a second circuit on top of each
        // server's, and would eject a server over a cluster of hedged or slow calls.
        health: { probe: chaosTrpcHealthProbe(servers), failureThreshold: Number.MAX_SAFE_INTEGER },
        budget: createRetryBudget({ ratio: 0.2, minRetriesPerSecond: 1 }),
        ...(telemetry === undefined ? {} : { telemetry }),
      }),
    ],
  });
  return {
    lanes: [
      lane('trpc/none', none),
      lane('trpc/usual', usual),
      lane('trpc/breakwater', breakwater),
    ],
  };
}
