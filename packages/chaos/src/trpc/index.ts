export {
  FetchEventSource,
  type FetchEventSourceEvent,
  type FetchEventSourceInit,
} from './event-source.js';
export type { TrpcAttemptFault, TrpcFaultPlan, TrpcInjectedError } from './faults.js';
export { chaosTrpcHealthProbe } from './health-probe.js';
export type { ChaosTrpcStats, TrpcObservedAttempt } from './recorder.js';
export { type ChaosTrpcContext, type ChaosTrpcRouter, chaosTrpcRouter } from './router.js';
export {
  type ChaosTrpcServer,
  type ChaosTrpcServerOptions,
  createChaosTrpcServer,
  TRPC_HEALTH_PATH,
} from './server.js';
