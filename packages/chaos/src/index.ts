// Filled in by the chaos issue.
export * from './grpc/index.js';
export * from './scenario/index.js';
export * from './trpc/index.js';
export * from './client/index.js';
