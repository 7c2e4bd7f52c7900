/**
 * Channel options that turn off grpc-js's own retries (service-config
 * `retryPolicy`/`hedgingPolicy` and transparent retries), so Breakwater's
 * retry interceptor is the only thing that repeats a call and attempts never
 * multiply. Spread them into the client options.
 * @example new EchoClient(address, credentials.createInsecure(), { ...disableGrpcRetries, interceptors })
 */
export const disableGrpcRetries = Object.freeze({ 'grpc.enable_retries': 0 } as const);

/**
 * Reconnect backoff for channels whose target is judged by Breakwater's own
 * health and circuits (routing targets, health-probe clients, and the channel
 * under `resilienceInterceptor`): 100 ms growing to 200 ms instead of
 * grpc-js's 1 s growing to 120 s. With the defaults, a server back after a
 * long outage could wait minutes for its channel to reconnect, so recovery
 * calls and health probes kept failing against a healthy server (after an
 * 8 s outage: first success 3.7 s after the restart; 1.2 s with the 200 ms →
 * 1 s this used to be; 110–260 ms now). While the server is down the channel
 * tries to connect at most five times a second — the circuit's own probe
 * cadence — which costs a refused TCP connect each.
 */
export const eagerReconnect = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 200,
} as const);
