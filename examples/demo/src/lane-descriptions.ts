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
      "createRoutingChannel from @breakwater/grpc-js as its README sets it up: one channel per replica (eagerReconnect: reconnects after 100–200 ms, not grpc-js's 1–120 s), round-robin, the standard circuit per replica (STANDARD_RESILIENCE.circuit: opens on 5 failures in a row spanning 500 ms or half the calls of 10 s, failed health checks included; a probe every 200 ms while open), grpc.health.v1 at the README's defaults (grpcHealthProbe watches Health/Watch: each replica pushes its status when it changes; Check every 5 s only for a server without Watch), failover of idempotent calls, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.",
    recovery:
      'while another replica answers, a replica whose circuit is open gets one call as its probe every 200 ms, however long the outage (the open duration does not grow), or at once when its channel is READY again or its health service pushes SERVING over the Health/Watch stream (a health signal half-opens the circuit); the probe gets one attempt (a probe is never retried, so its failure re-opens the circuit at once and the cadence stays 200 ms), and its success closes the circuit. So it is back within about 200 ms of the replica, while sending the dead ones only the probes. With every replica ejected (a full outage) the router probes for all of them together: one call every 200 ms, to the replicas in turn, one attempt and no failover after it (not one probe per replica, nor 1 call in 10 on top), or at once to a replica whose channel is READY again or that pushed SERVING (one call per push: a replica that says SERVING while it still fails gets one call, not a flood); so once every circuit is open the servers see 5 attempts a second however many replicas, 0.2 per call at 25 calls/s. The replicas say NOT_SERVING while they fail and push SERVING when they heal (as the health services of a real outage do), so the very next Breakwater call goes to a healed replica: it is back on the same call as the clients that never stop sending (every 40 ms at 25 calls/s), without having sent every call to the failing servers; without a pushed health signal it would trail them by up to one 200 ms probe interval.',
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
      "routingLink from @breakwater/trpc over one httpLink per server, as its docs set it up: round-robin, the standard circuit per server (STANDARD_RESILIENCE.circuit: opens on 5 failures in a row spanning 500 ms or half the calls of 10 s; a probe every 200 ms while open), each server's /healthz watched as an event stream (createHttpProbe({ watch: true }): the server pushes its status when it changes), failover, a hedge after 150 ms (at most 1), a retry budget of 20% + 1/s; 1 s deadline.",
    recovery:
      'while another server answers, a server whose circuit is open gets one call as its probe every 200 ms, however long the outage (the open duration does not grow), or at once when its /healthz event stream pushes SERVING (a health signal half-opens the circuit); the probe gets one attempt (a probe is never retried, so its failure re-opens the circuit at once and the cadence stays 200 ms), and its success closes the circuit, so it is back within about 200 ms of the server. With every server ejected (a full outage) the router probes for all of them together: one call every 200 ms, to the servers in turn, one attempt and no failover after it (not one probe per server, nor 1 call in 10 on top), or at once to a server that pushed SERVING (one call per push); so once every circuit is open the servers see 5 attempts a second however many servers, 0.2 per call at 25 calls/s. The servers say NOT_SERVING while they fail and push SERVING when they heal, so the very next Breakwater call goes to a healed server: it is back on the same call as the clients that never stop sending, without having sent every call to the failing servers; without the pushed health (HTTP has no standard health watch: this is an event-stream convention) it would trail them by up to one 200 ms probe interval.',
  },
};

/** The description of `lane`; throws when a lane was added without one, so the report never guesses. */
export function describeLane(lane: string): LaneDescription {
  const d = LANE_DESCRIPTIONS[lane];
  if (!d)
    throw new Error(`examples/demo: no description for lane "${lane}" in lane-descriptions.ts`);
  return d;
}
