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
  'grpc/hedging': {
    config:
      'grpc-js with a service-config hedgingPolicy (gRFC A6): up to 3 attempts of a call in flight, the next one after 150 ms or at once on UNAVAILABLE; round_robin, 1 s deadline.',
    recovery:
      'it never stops sending, so it succeeds as soon as a server answers; in an outage every call costs the servers up to 3 attempts.',
  },
  'grpc/breakwater': {
    config:
      "createRoutingChannel from @breakwater/grpc-js as its README sets it up: one channel per replica (eagerReconnect: reconnects after 100–200 ms, not grpc-js's 1–120 s), least-loaded selection (the default: of two random healthy replicas, the one with the lower latency × calls in flight), the standard circuit per replica (STANDARD_RESILIENCE.circuit: opens on 5 failures in a row spanning 500 ms or half the calls of 10 s, failed health checks included; a probe every 200 ms while open), grpc.health.v1 at the README's defaults (grpcHealthProbe watches Health/Watch: each replica pushes its status when it changes; Check every 5 s only for a server without Watch), failover of idempotent calls, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.",
    recovery:
      'a replica whose circuit is open gets one probe call every 200 ms, or the next call at once when its channel is READY again or it pushes SERVING over Health/Watch; a successful probe closes the circuit (details: examples/demo/README.md).',
  },
  'grpc/breakwater-adaptive': {
    config:
      "--scenario overload only: grpc/breakwater's routing channel (its own) with concurrency: { adaptive: true }: each replica its own limit on the calls in flight, discovered from that replica's latency (core README, Adaptive concurrency); a replica at its limit is passed over for the next, and a call every replica's limit refuses ends at once (RESOURCE_EXHAUSTED), never sent; 1 s deadline.",
    recovery:
      'as grpc/breakwater; the limit grows again by about one per round trip once answers are back within 1.5 × the fastest seen.',
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
      "routingLink from @breakwater/trpc over one httpLink per server, as its docs set it up: least-loaded selection (the default), the standard circuit per server (STANDARD_RESILIENCE.circuit: opens on 5 failures in a row spanning 500 ms or half the calls of 10 s; a probe every 200 ms while open), each server's /healthz watched as an event stream (createHttpProbe({ watch: true }): the server pushes its status when it changes), failover, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.",
    recovery:
      'a server whose circuit is open gets one probe call every 200 ms, or the next call at once when its /healthz event stream pushes SERVING; a successful probe closes the circuit (details: examples/demo/README.md).',
  },
};

/** The description of `lane`; throws when a lane was added without one, so the report never guesses. */
export function describeLane(lane: string): LaneDescription {
  const d = LANE_DESCRIPTIONS[lane];
  if (!d)
    throw new Error(`examples/demo: no description for lane "${lane}" in lane-descriptions.ts`);
  return d;
}
