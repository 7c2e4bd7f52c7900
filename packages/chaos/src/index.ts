// @breakwater/chaos — fault injection for tests and demos: chaos servers (gRPC, tRPC),
// client-side chaos for the caller's own chain, and the scenario runner.

export * from './client/index.js';
export * from './grpc/index.js';
export * from './scenario/index.js';
export * from './trpc/index.js';
