// @breakwater/core/grpc — the gRPC layer both adapters share. It loads no gRPC
// library (status codes are plain numbers), so it runs in a browser too.

export {
  circuitScopeKey,
  createGrpcCircuits,
  type GrpcCircuitOptions,
  type GrpcCircuitScope,
  type GrpcCircuits,
  type GrpcMethodCircuit,
} from './circuits.js';
export {
  classifyGrpcStatus,
  createGrpcStatusClassifier,
  type GrpcAttemptInfo,
  type GrpcClassifierInput,
  type GrpcStatusClassifier,
  type GrpcStatusClassifierOptions,
  type GrpcStatusPolicy,
  PUSHBACK_TRAILER,
  parsePushback,
  type TrailerGetter,
} from './classifier.js';
export { PREVIOUS_ATTEMPTS_HEADER } from './headers.js';
export {
  compileSelector,
  idempotentMethods,
  type MethodSelector,
  type PackageDefinitionLike,
  type ServiceDefinitionLike,
} from './methods.js';
export { checkAttempts, type GrpcRetryEvent, resolveBackoff } from './retry-settings.js';
export {
  type FromServiceConfigOptions,
  fromServiceConfig,
  type ServiceConfigMethodOptions,
  type ServiceConfigOptions,
  type ServiceConfigRetry,
} from './service-config.js';
export { GrpcStatus, type GrpcStatusCode, grpcStatusName } from './status.js';
