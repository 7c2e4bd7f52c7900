export { type ChaosInterceptorOptions, chaosInterceptor } from './grpc-interceptor.js';
export { type ChaosMiddlewareOptions, chaosMiddleware } from './nice-grpc-middleware.js';
export type { ClientChaosOptions } from './plan.js';
export { type ChaosLinkOptions, chaosLink } from './trpc-link.js';
