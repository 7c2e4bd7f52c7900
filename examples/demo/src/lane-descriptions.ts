/**
 * What each lane is, in words, for the terminal and the report. One entry per
 * lane defined in `grpc-lanes.ts` and `trpc-lanes.ts`: when a lane's
 * configuration changes there, its entry here changes with it (a test checks
 * that every lane has one).
 */
export interface LaneDescription {
  /** The client and its configuration, in one sentence. */
  config: string;
  /** How the client finds a replica that came back (or the upstream once it recovers), in one sentence. */
  recovery: string;
}

/** Every lane's description, keyed by lane name, in display order. */
export const LANE_DESCRIPTIONS: Readonly<Record<string, LaneDescription>> = {
  'grpc/none': {
    config:
      'bare grpc-js client: round_robin over the 3 replica addresses, 1 s deadline per call, no retries.',
    recovery:
      'grpc-js reconnects to a restarted replica on its own reconnect backoff (1 s, ×1.6, up to 120 s); a failed call is never repeated.',
  },
  'grpc/usual': {
    config:
      'grpc-js with the service-config retryPolicy of the gRPC retry guide: 3 attempts, backoff 0.1 s ×2 up to 1 s, on UNAVAILABLE; round_robin, 1 s deadline.',
    recovery:
      'it never stops sending, so it succeeds as soon as a server answers; in an outage every call costs the servers up to 3 attempts.',
  },
  'grpc/breakwater': {
    config:
      'createRoutingChannel from @breakwater/grpc-js: one channel per replica, round-robin, a circuit per replica (opens after 3 failures in a row, failed probes included; lets one call through 1 s after it opened), grpc.health.v1 probes every 1 s, failover of idempotent calls, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.',
    recovery:
      'a replica whose circuit is open gets no calls until a passing health probe (every 1 s) or its channel back to READY half-opens the circuit at once, or 1 s has passed since it opened; then one call goes to it as the probe, with one attempt (a probe is never retried), and its success closes the circuit; failed health probes count as failures, so a replica answering NOT_SERVING opens without a call. With every replica ejected, 1 call in 10 still goes to one of them as its probe (the panic rule).',
  },
  'trpc/none': {
    config:
      'one tRPC httpLink per server in round-robin (what DNS round-robin gives), no retries; 1 s deadline (AbortSignal).',
    recovery: 'it sends to every server all the time, so a server that is back answers at once.',
  },
  'trpc/usual': {
    config:
      "tRPC's retryLink in front of the same round-robin: queries only, 3 attempts, 100 ms × 2ⁿ up to 1 s, not on 4xx; 1 s deadline.",
    recovery:
      'it never stops sending, so it succeeds as soon as a server answers; in an outage every call costs the servers up to 3 attempts.',
  },
  'trpc/breakwater': {
    config:
      'routingLink from @breakwater/trpc over one httpLink per server: round-robin, a circuit per server (opens after 3 failures in a row, lets a call through 1 s after the last failure), failover, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.',
    recovery:
      'no active health checks: a server whose circuit is open is tried again when its circuit lets a call through (1 s after the last failure); that call is the probe, with one attempt (a probe is never retried), and its success closes the circuit; a failed probe keeps it open for another second. With every server ejected, 1 call in 10 still goes to one of them as its probe (the panic rule).',
  },
};

/** The description of `lane`; throws when a lane was added without one, so the report never guesses. */
export function describeLane(lane: string): LaneDescription {
  const d = LANE_DESCRIPTIONS[lane];
  if (!d)
    throw new Error(`examples/demo: no description for lane "${lane}" in lane-descriptions.ts`);
  return d;
}
