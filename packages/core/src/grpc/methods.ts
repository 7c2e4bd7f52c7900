import { optionTypeError } from '../internal/validate.js';

/**
 * Which methods a setting applies to: full paths (`/pkg.Service/Method`) or
 * service names (`pkg.Service`), a predicate over the path, or `'all'`.
 */
export type MethodSelector = Iterable<string> | ((path: string) => boolean) | 'all';

/** Idempotency levels proto-loader reads from `option idempotency_level`. */
const SAFE_LEVELS = new Set(['NO_SIDE_EFFECTS', 'IDEMPOTENT']);

/** The shape of a proto-loader package definition that carries method options. */
export type PackageDefinitionLike = Readonly<
  Record<string, unknown | Readonly<Record<string, { path?: unknown; options?: unknown }>>>
>;

/**
 * The full paths of every method a proto-loader package definition marks
 * `NO_SIDE_EFFECTS` or `IDEMPOTENT`. grpc-js does not pass method options to
 * interceptors, so read them here once and hand the set to `idempotent`.
 * @example
 * const safe = idempotentMethods(protoLoader.loadSync('shop.proto'));
 * resilienceInterceptor({ idempotent: safe });
 */
export function idempotentMethods(packageDefinition: PackageDefinitionLike): Set<string> {
  const safe = new Set<string>();
  for (const service of Object.values(packageDefinition)) {
    if (typeof service !== 'object' || service === null || 'format' in service) continue;
    for (const method of Object.values(service as Record<string, unknown>)) {
      const m = method as { path?: unknown; options?: { idempotency_level?: unknown } };
      if (typeof m?.path === 'string' && SAFE_LEVELS.has(String(m.options?.idempotency_level))) {
        safe.add(m.path);
      }
    }
  }
  return safe;
}

/**
 * Compiles a {@link MethodSelector} into a predicate over method paths; `undefined`
 * selects nothing. Throws a `TypeError` naming option `name` for anything else.
 */
export function compileSelector(
  name: string,
  selector: MethodSelector | undefined,
): (path: string) => boolean {
  if (selector === undefined) return () => false;
  if (selector === 'all') return () => true;
  if (typeof selector === 'function') return selector;
  if (
    typeof selector === 'string' ||
    typeof (selector as Iterable<string>)[Symbol.iterator] !== 'function'
  ) {
    throw optionTypeError(
      name,
      `must be 'all', a function or an iterable of method paths, got ${String(selector)}`,
    );
  }
  const names = new Set(selector);
  return (path) => names.has(path) || names.has(path.slice(1, path.lastIndexOf('/')));
}
