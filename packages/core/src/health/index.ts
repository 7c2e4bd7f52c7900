// Health: registry (counts + one shared-breaker circuit per provider), probes,
// readiness rules, background checker. User-facing factories first, types below.
// The HTTP and TCP probes need Node built-ins and live in `@breakwater/core/node`
// (src/node.ts), so the main entry bundles for browsers.

export type { HealthChecker, HealthCheckerOptions, ProbeResultEvent } from './checker.js';
export { createHealthChecker } from './checker.js';
export { all, any } from './combinators.js';
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
