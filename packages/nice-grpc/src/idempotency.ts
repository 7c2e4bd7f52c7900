import { compileSelector, type MethodSelector } from '@breakwater/core/grpc';
import type { MethodDescriptor } from 'nice-grpc-common';

/**
 * True when a method definition marks the method safe to repeat:
 * `option idempotency_level = IDEMPOTENT` or `NO_SIDE_EFFECTS`, which
 * ts-proto / nice-grpc definitions carry as `options.idempotencyLevel`.
 * (Definitions nice-grpc converts from grpc-js / proto-loader lose their
 * method options: list those methods with `idempotentMethods(packageDefinition)`
 * from `@breakwater/core/grpc` instead.)
 */
export function isIdempotentMethod(method: Pick<MethodDescriptor, 'options'>): boolean {
  const level = method.options?.idempotencyLevel;
  return level === 'IDEMPOTENT' || level === 'NO_SIDE_EFFECTS';
}

/**
 * The methods a middleware may repeat: those the definition marks safe, plus
 * those `selector` lists (paths, services, a predicate or `'all'`); a
 * boolean (a `methods` entry's) decides alone.
 * @internal
 */
export function idempotencyRule(
  name: string,
  selector: MethodSelector | boolean | undefined,
): (method: MethodDescriptor) => boolean {
  if (selector === undefined) return isIdempotentMethod;
  // A `methods` entry's own `idempotent` decides for its methods, whatever their definition says.
  if (typeof selector === 'boolean') return () => selector;
  const listed = compileSelector(name, selector);
  return (method) => isIdempotentMethod(method) || listed(method.path);
}
