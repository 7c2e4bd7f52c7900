import type { MethodSelectorForm } from '../attempts/method-options.js';
import { describeValue, optionTypeError } from '../internal/validate.js';

/**
 * Which methods a setting applies to: a list (array or set) of full method
 * paths (`/pkg.Service/Method`) and service names (`pkg.Service`), a
 * predicate over the path, or `'all'`.
 */
export type MethodSelector =
  | readonly string[]
  | ReadonlySet<string>
  | ((path: string) => boolean)
  | 'all';

/** Idempotency levels a method definition may carry (`option idempotency_level`). */
const SAFE_LEVELS = new Set(['NO_SIDE_EFFECTS', 'IDEMPOTENT']);

/** The shape of a proto-loader package definition that carries method options. */
export type PackageDefinitionLike = Readonly<
  Record<string, unknown | Readonly<Record<string, { path?: unknown; options?: unknown }>>>
>;

/** The shape of a ts-proto / nice-grpc service definition: its methods' paths are `/fullName/name`. */
export interface ServiceDefinitionLike {
  readonly fullName: string;
  readonly methods: Readonly<Record<string, { name?: unknown; options?: unknown }>>;
}

type DefinedMethodOptions = { idempotency_level?: unknown; idempotencyLevel?: unknown } | undefined;

/** Each method's path and idempotency level, from either definition shape. */
function definedMethods(definition: object): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  const service = definition as Partial<ServiceDefinitionLike>;
  if (typeof service.fullName === 'string' && typeof service.methods === 'object') {
    for (const [key, method] of Object.entries(service.methods ?? {})) {
      const name = typeof method?.name === 'string' ? method.name : key;
      found.push([
        `/${service.fullName}/${name}`,
        (method?.options as DefinedMethodOptions)?.idempotencyLevel,
      ]);
    }
    return found;
  }
  for (const entry of Object.values(definition)) {
    if (typeof entry !== 'object' || entry === null || 'format' in entry) continue;
    for (const method of Object.values(entry as Record<string, unknown>)) {
      const m = method as { path?: unknown; options?: DefinedMethodOptions };
      if (typeof m?.path === 'string') found.push([m.path, m.options?.idempotency_level]);
    }
  }
  return found;
}

const ACCEPTED = "a full method path ('/pkg.Service/Method') or a service name ('pkg.Service')";

/**
 * Why a selector entry can match no method path, or `undefined` when its
 * shape can: a path is `/service/method`; a service name has no `/` and is
 * package-qualified (a bare `Method` is the usual mistake, and a service
 * declared without a package is listed by its methods' full paths).
 */
function shapeFault(entry: unknown): string | undefined {
  if (typeof entry !== 'string') return `must be ${ACCEPTED}, got ${describeValue(entry)}`;
  if (entry.startsWith('/')) {
    const parts = entry.split('/');
    if (parts.length === 3 && parts[1] !== '' && parts[2] !== '') return undefined;
    return `is ${describeValue(entry)}, which matches no method: a full method path is '/pkg.Service/Method'`;
  }
  if (entry.includes('/')) {
    return `is ${describeValue(entry)}, which matches no method: a full method path starts with '/' — did you mean ${describeValue(`/${entry}`)}?`;
  }
  if (entry.includes('.') && !entry.startsWith('.') && !entry.endsWith('.')) return undefined;
  return `is ${describeValue(entry)}, which matches no method: give ${ACCEPTED}, e.g. ${describeValue(`/pkg.Service/${entry}`)}`;
}

/** The listed names, each checked to be a shape some method path can have. */
function checkedNames(name: string, selector: Iterable<unknown>): Set<string> {
  const names = new Set<string>();
  let index = 0;
  for (const entry of selector) {
    const problem = shapeFault(entry);
    if (problem !== undefined) throw optionTypeError(`${name}[${index}]`, problem);
    names.add(entry as string);
    index++;
  }
  return names;
}

function matcher(names: ReadonlySet<string>): (path: string) => boolean {
  return (path) => names.has(path) || names.has(path.slice(1, path.lastIndexOf('/')));
}

/**
 * The full paths of every method a package definition marks `NO_SIDE_EFFECTS`
 * or `IDEMPOTENT`, plus those `also` selects. grpc-js does not pass method
 * options to interceptors, so read them here once and hand the set to
 * `idempotent`. Takes a proto-loader package definition or a ts-proto /
 * nice-grpc service definition. An `also` entry that matches none of the
 * definition's methods throws a `TypeError`: the definition is the whole
 * method set, so such an entry is a typo that would silently retry nothing.
 * @example
 * const safe = idempotentMethods(protoLoader.loadSync('shop.proto'), ['/shop.Catalog/Search']);
 * resilienceInterceptor({ idempotent: safe });
 */
export function idempotentMethods(
  packageDefinition: PackageDefinitionLike | ServiceDefinitionLike,
  also?: readonly string[],
): Set<string> {
  const safe = new Set<string>();
  const all: string[] = [];
  for (const [path, level] of definedMethods(packageDefinition)) {
    all.push(path);
    if (SAFE_LEVELS.has(String(level))) safe.add(path);
  }
  if (also === undefined) return safe;
  if (typeof also === 'string' || !Array.isArray(also)) {
    throw optionTypeError(
      'also',
      `must be an array of method paths or service names, got ${describeValue(also)}`,
      'idempotentMethods',
    );
  }
  also.forEach((entry, index) => {
    const at = `also[${index}]`;
    const problem = shapeFault(entry);
    if (problem !== undefined) throw optionTypeError(at, problem, 'idempotentMethods');
    const selects = matcher(new Set([entry]));
    const matched = all.filter(selects);
    if (matched.length === 0) {
      const services = [...new Set(all.map((p) => p.slice(1, p.lastIndexOf('/'))))].join(', ');
      throw optionTypeError(
        at,
        `is ${describeValue(entry)}, which matches no method of the definition (its services: ${services || 'none'})`,
        'idempotentMethods',
      );
    }
    for (const path of matched) safe.add(path);
  });
  return safe;
}

/**
 * Compiles a {@link MethodSelector} into a predicate over method paths; `undefined`
 * selects nothing. Throws a `TypeError` naming option `name` (and the entry)
 * for anything else, including a listed name no method path can have.
 */
export function compileSelector(
  name: string,
  selector: MethodSelector | undefined,
): (path: string) => boolean {
  if (selector === undefined) return () => false;
  if (selector === 'all') return () => true;
  if (typeof selector === 'function') return selector;
  if (!Array.isArray(selector) && !(selector instanceof Set)) {
    throw optionTypeError(
      name,
      `must be 'all', a function, or an array or set of method paths ('/pkg.Service/Method') and service names ('pkg.Service'), got ${describeValue(selector)}`,
    );
  }
  return matcher(checkedNames(name, selector));
}

/**
 * gRPC's `methods` selectors: the same forms `idempotent` takes, a full
 * method path (`/pkg.Service/Method`, more specific) or a service name
 * (`pkg.Service`).
 * @internal
 */
export const GRPC_METHOD_SELECTORS: MethodSelectorForm = {
  fault: shapeFault,
  candidates: (path) => [path, path.slice(1, path.lastIndexOf('/'))],
};
