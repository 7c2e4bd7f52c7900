export {
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  type AdaptiveThrottleStats,
  createAdaptiveThrottle,
  type ThrottleRejectEvent,
} from './adaptive-throttle.js';
export {
  createKeyedLimiter,
  type KeyedLimiter,
  type KeyedLimiterOptions,
  type KeyedLimiterStats,
} from './keyed-limiter.js';
export { createTokenBucket, type TokenBucket, type TokenBucketOptions } from './token-bucket.js';
