export {
  type Backoff,
  type BackoffJitter,
  type BackoffOptions,
  type BackoffStrategy,
  createBackoff,
  MAX_BACKOFF_DELAY_MS,
} from './backoff.js';
export {
  createRetryBudget,
  type RetryBudget,
  type RetryBudgetOptions,
  type RetryBudgetStats,
} from './budget.js';
export {
  createTransientErrorPredicate,
  isTransientError,
  type TransientErrorPredicate,
  type TransientErrorPredicateOptions,
} from './transient.js';
export type { ErrorPolicy, ErrorVerdict } from './verdict.js';
export {
  type RetryAttemptInfo,
  type RetryClassifier,
  type RetryOperation,
  type RetryOptions,
  withRetry,
} from './with-retry.js';
