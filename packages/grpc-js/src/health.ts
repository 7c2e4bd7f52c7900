// @breakwater/grpc-js/health — the gRPC health probe. A subpath of its own because
// it needs `grpc-health-check` (an optional peer): users who do not probe do not
// install it, and the main entry never loads it.

export {
  createGrpcHealthProbe,
  type GrpcHealthProbe,
  type GrpcHealthProbeOptions,
  grpcHealthProbe,
} from './health-probe.js';
