export {
  DeadlineExceededError,
  isDeadlineExceededError,
} from '../errors/deadline-exceeded-error.js';
export { DeadlineTimerError, isDeadlineTimerError } from '../errors/deadline-timer-error.js';
export {
  isOperationAbortedError,
  OperationAbortedError,
} from '../errors/operation-aborted-error.js';
export { neverAbortedSignal } from '../internal/abort.js';
export {
  createDeadline,
  type Deadline,
  type DeadlineOptions,
  earliestDeadline,
} from './deadline.js';
export { type TimeoutOperation, type TimeoutOptions, withTimeout } from './with-timeout.js';
