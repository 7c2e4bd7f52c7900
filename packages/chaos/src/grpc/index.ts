export {
  type CapacitySpec,
  type CapacityStats,
  capacityPerSecond,
  checkCapacity,
} from './capacity.js';
export {
  type GrpcCapacityServer,
  type GrpcCapacityServerOptions,
  startGrpcCapacityServer,
} from './capacity-server.js';
export {
  type ChildGrpcChaosServer,
  type SpawnGrpcChaosServerOptions,
  spawnGrpcChaosServer,
} from './child.js';
export {
  callMetadata,
  type EchoOutcome,
  echoBidi,
  echoServerStream,
  echoUnary,
} from './echo-calls.js';
export { createEchoClient, type EchoClient, echoClientConstructor } from './echo-client.js';
export {
  ECHO_METHODS,
  ECHO_PROTO_SOURCE,
  ECHO_SERVICE,
  type EchoRequest,
  type EchoResponse,
  loadEchoPackageDefinition,
} from './echo-proto.js';
export {
  type AttemptFacts,
  type AttemptPlan,
  checkFaults,
  type GrpcFaultRule,
  type LatencySpec,
  planAttempt,
} from './faults.js';
export type { AttemptRecorder, ObservedAttempt } from './recorder.js';
export { attemptRandom, callKey, seededRandom } from './seeded-random.js';
export {
  CALL_ID_HEADER,
  type GrpcChaosServer,
  type GrpcChaosServerOptions,
  startGrpcChaosServer,
} from './server.js';
