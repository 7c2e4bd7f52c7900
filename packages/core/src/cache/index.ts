export {
  type Cache,
  type CacheLoader,
  type CacheLookup,
  type CacheOptions,
  type CacheStats,
  createCache,
} from './cache.js';
