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
 * health and circuits (routing targets, health-probe clients): 200 ms growing
 * to 1 s instead of grpc-js's 1 s growing to 120 s. With the defaults, a
 * replica back after a long outage could wait minutes for its channel to
 * reconnect, so recovery calls and health probes kept failing against a
 * healthy server; failover carries the traffic meanwhile, so reconnecting
 * eagerly costs nothing.
 */
export const eagerReconnect = Object.freeze({
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 1000,
} as const);
