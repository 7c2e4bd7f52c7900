// @breakwater/core/internal — helpers shared by Breakwater's own adapters.
// Not for users: no semver; anything here may change in any release.

export { AttemptTimeout } from '../attempts/attempt-timeout.js';
/** The attempt engine and its promise-style driver. */
export {
  AttemptEngine,
  type AttemptEngineSettings,
  type RetryBudgetLike,
  STOP_ATTEMPTS,
  STOP_BUDGET,
  STOP_DEADLINE,
  STOP_NOT_RETRYABLE,
  STOP_PUSHBACK,
  type StopReason,
  stopReason,
} from '../attempts/engine.js';
export { type HedgeHooks, runHedged } from '../attempts/hedge-loop.js';
export {
  entryOptions,
  type MethodEntry,
  type MethodSelectorForm,
  type MethodTable,
  mergeMethodOptions,
  PROCEDURE_SELECTORS,
  resolveMethods,
} from '../attempts/method-options.js';
export {
  RESILIENCE_KEYS,
  type ResiliencePlan,
  resolveResilience,
} from '../attempts/resilience-options.js';
export { type RetryLoopHooks, retryAfterFailure, runAttempts } from '../attempts/retry-loop.js';
export {
  callsOnlyTelemetry,
  claimTelemetry,
  errorTypeOf,
  guardTelemetry,
  refusalOf,
  type SafeCallTelemetry,
  type SafeTelemetry,
  stopRefusal,
  TELEMETRY_SCOPE,
  TelemetryScope,
  telemetryScopeOf,
} from '../attempts/telemetry.js';
export { validateCircuitBreakerConfig } from '../breaker/config.js';
export type { RateWindowState } from '../breaker/window.js';
/** The process-wide deadline wheel on the host timer (no host timer per call). */
export { sharedTimerWheel, timerWheelFor, WheelEntry } from '../deadline/timer-wheel.js';
export {
  admitGrpcCall,
  type GrpcAdmission,
  type GrpcAdmissionParts,
} from '../grpc/admission.js';
export { grpcAdaptiveLimiters, grpcLimitOutcome } from '../grpc/limits.js';
export { GRPC_METHOD_SELECTORS } from '../grpc/methods.js';
export { grpcTelemetryTargets } from '../grpc/telemetry.js';
export { runProbe } from '../health/probe.js';
export { type AdmissionParts, type Admitted, admitCall, type Refused } from '../limit/admission.js';
export { criticalityOf } from '../limit/criticality.js';
export { type AdaptiveLimiters, createAdaptiveLimiters } from '../limit/limiters.js';
/** Propagation: what an outbound call inherits from the inbound call it serves. */
export { onInboundCancel } from '../propagation/cancel-fanout.js';
export { parseCriticality, timeoutHeaderMs } from '../propagation/inbound.js';
export { type Inheritance, inheritInbound, type LinkedSignal } from '../propagation/inherit.js';
export { DONT_RETRY, endedOverloaded } from '../propagation/overloaded.js';
export { type PropagatePlan, resolvePropagate } from '../propagation/propagate-options.js';
export { MAX_BACKOFF_DELAY_MS } from '../retry/backoff.js';
export { shareLimiters } from '../routing/router.js';
export { ADAPTER_SELECTION } from '../routing/selection.js';
/** The host timer helpers (the only code that touches host timers; waits past 2³¹−1 ms chain). */
export {
  startTimer,
  startTimerWith,
  stopTimer,
  type TimerHandle,
} from '../time/timer.js';
export { abortError, neverAbortedSignal } from './abort.js';
export { checkCall, checkSignal } from './call-options.js';
export { EventEmitter } from './events.js';
export { notify } from './notify.js';
/** One listener per signal, however many calls wait on it. */
export { onAbort } from './on-abort.js';
/** Option checking: full option paths, unknown keys with suggestions. */
export {
  checkFunction,
  checkKeys,
  checkLookalikeKeys,
  checkNumber,
  checkObject,
  checkOneOf,
  checkOptions,
  describeValue,
  type KnownKeys,
  keysOf,
  optionalNumber,
  optionPath,
  optionRangeError,
  optionTypeError,
} from './validate.js';
export { reportWarning } from './warning.js';
