// @breakwater/core — user-facing factories first, types and extension points below.

export * from './breaker/index.js';
export * from './errors/index.js';
export { type Duration, parseDuration } from './internal/duration.js';
export type { Disposable, Event } from './internal/events.js';
export * from './limit/index.js';
export * from './pool/index.js';
export { type Err, err, isErr, isOk, type Ok, ok, type Result } from './result/result.js';
export * from './time/index.js';
