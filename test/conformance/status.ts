import type { EntryPoint } from './types.js';

const NOT_PORTED = (what: string) =>
  `not ported on this branch yet: ${what} rejects the new vocabulary's keys at construction`;
const TRPC_ROUTING_OLD = 'routingLink still runs its old rules (p-trpc not merged here)';

/**
 * Pairs (entry point, scenario id) known to fail on this branch, each with the
 * reason; `'*'` stands for every scenario of the entry point. They run as
 * `it.fails`: the suite stays green, and a pair that starts to pass fails the
 * suite until its line here is deleted, so this list can only shrink honestly.
 */
export const KNOWN_FAILURES: Partial<Record<EntryPoint, Readonly<Record<string, string>>>> = {
  protect: { '*': NOT_PORTED('protect (p-core: `retry`, `timeoutMs`, `classify`)') },
  router: {
    'server-cancelled-failover':
      'core/grpc classifyGrpcStatus answers every CANCELLED with "no retry, no failover"; the rule says a server-sent CANCELLED may fail over',
  },
  'grpc-js routing channel': {
    '*': NOT_PORTED('createRoutingChannel (p-grpcjs: `protection.retry`, `budget: false`)'),
  },
  'nice-grpc middleware': { '*': NOT_PORTED('resilienceMiddleware (p-nice not merged)') },
  'tRPC resilienceLink': { '*': NOT_PORTED('resilienceLink (p-trpc not merged)') },
  'tRPC routingLink': {
    'pushback-300': `${TRPC_ROUTING_OLD}: the larger of pushback and backoff wins (gap 1.5 s)`,
    'pushback-negative': `${TRPC_ROUTING_OLD}: a negative Retry-After is ignored and the call retried`,
    'pushback-non-numeric': `${TRPC_ROUTING_OLD}: a non-numeric Retry-After is ignored and the call retried`,
    'non-idempotent-not-retried': `${TRPC_ROUTING_OLD}: a mutation that reached the server is retried`,
    'sent-mutation-not-rerun': `${TRPC_ROUTING_OLD}: issue 17 (b), a 502'd mutation is re-run on the secondary`,
  },
};
