export {
  createPool,
  type Pool,
  type PoolOptions,
  type PoolQueueFullEvent,
  type PoolRunOptions,
  type PoolStats,
  type PoolTask,
} from './pool.js';
