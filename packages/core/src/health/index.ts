// Health: registry (counts + one shared-breaker circuit per provider), probes,
// readiness rules, background checker. User-facing factories first, types below.

export type { HealthChecker, HealthCheckerOptions, ProbeResultEvent } from './checker.js';
export { createHealthChecker } from './checker.js';
export { all, any } from './combinators.js';
export type { HttpProbeOptions, HttpTarget } from './http-probe.js';
export { createHttpProbe, httpProbe } from './http-probe.js';
export type {
  HealthVerdict,
  Probe,
  ProbeContext,
  ProbeResult,
  ProbeSetting,
} from './probe.js';
export { runProbe } from './probe.js';
export type {
  BelowLimitOptions,
  RatioBelowOptions,
  ReadinessRule,
  Sample,
  StartupGraceOptions,
  TwoSampleOptions,
} from './readiness.js';
export {
  belowLimit,
  counterProgress,
  ratioBelow,
  startupGrace,
  unchanged,
} from './readiness.js';
export type {
  HealthRecorder,
  HealthRegistry,
  HealthRegistryOptions,
  HealthSuccessOptions,
  ProviderHealth,
} from './registry.js';
export { createHealthRegistry } from './registry.js';
export type { HealthTargets, NamedTarget } from './targets.js';
export type { TcpProbeOptions, TcpTarget } from './tcp-probe.js';
export { createTcpProbe, tcpProbe } from './tcp-probe.js';
