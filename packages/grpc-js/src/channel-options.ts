/**
 * Channel options that turn off grpc-js's own retries (service-config
 * `retryPolicy`/`hedgingPolicy` and transparent retries), so Breakwater's
 * retry interceptor is the only thing that repeats a call and attempts never
 * multiply. Spread them into the client options.
 * @example new EchoClient(address, credentials.createInsecure(), { ...disableGrpcRetries, interceptors })
 */
export const disableGrpcRetries = Object.freeze({ 'grpc.enable_retries': 0 } as const);
