// @breakwater/core/health — readiness rules for probes, the combinators that
// join them, and the detail types of probes, checkers and the health registry.
// `createHealthChecker` and `createHealthRegistry` are in the root.

export type { HealthCheckerOptions, ProbeResultEvent } from './checker.js';
export { allOf, anyOf } from './combinators.js';
export type {
  HealthVerdict,
  ProbeCheck,
  ProbeContext,
  ProbeResult,
  ProbeSetting,
  ProbeWatch,
  ProbeWatchContext,
} from './probe.js';
export {
  type BelowLimitOptions,
  belowLimit,
  counterProgress,
  type RatioBelowOptions,
  type ReadinessRule,
  type ReadinessSample,
  ratioBelow,
  type StartupGraceOptions,
  sampleUnchanged,
  startupGrace,
  type TwoSampleOptions,
} from './readiness.js';
export type {
  HealthRecorder,
  HealthRegistryOptions,
  HealthSuccessOptions,
  ProviderHealth,
} from './registry.js';
export type { HealthTargets, NamedTarget } from './targets.js';
