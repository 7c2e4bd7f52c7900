export {
  createRedisCircuitBreaker,
  type RedisCircuitBreaker,
  type RedisCircuitBreakerOptions,
} from './circuit-breaker.js';
export {
  createRedisKeyedLimiter,
  type RedisKeyedLimiter,
  type RedisKeyedLimiterOptions,
} from './keyed-limiter.js';
export type { RedisClient, RedisFallback, RedisLinkStats, RedisSharedOptions } from './link.js';
export {
  createRedisRetryBudget,
  type RedisRetryBudget,
  type RedisRetryBudgetOptions,
} from './retry-budget.js';
export {
  createRedisTokenBucket,
  type LeaseOptions,
  type RedisTokenBucket,
  type RedisTokenBucketOptions,
} from './token-bucket.js';
