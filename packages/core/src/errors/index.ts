export {
  CircuitOpenError,
  type CircuitOpenErrorOptions,
  isCircuitOpenError,
} from './circuit-open-error.js';
export {
  ConcurrencyLimitError,
  isConcurrencyLimitError,
} from './concurrency-limit-error.js';
export { DeadlineExceededError, isDeadlineExceededError } from './deadline-exceeded-error.js';
export { DeadlineTimerError, isDeadlineTimerError } from './deadline-timer-error.js';
export { ErrorPolicyError, isErrorPolicyError } from './error-policy-error.js';
export { isOperationAbortedError, OperationAbortedError } from './operation-aborted-error.js';
export { isQueueFullError, QueueFullError } from './queue-full-error.js';
export { isRateLimitError, RateLimitError } from './rate-limit-error.js';
export {
  isRoutingError,
  RoutingError,
  type RoutingSkipReason,
  type RoutingVisit,
} from './routing-error.js';
export { isThrottledError, ThrottledError } from './throttled-error.js';
