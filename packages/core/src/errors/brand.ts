/**
 * Brand shared by every Breakwater error. `Symbol.for` makes two installed
 * copies of the package agree, which `instanceof` cannot.
 * @internal
 */
export const ERROR_BRAND: unique symbol = Symbol.for('breakwater.error') as never;

/**
 * Stamps `error`'s class with its name, as `name` and as the brand. The stamp
 * goes on the prototype once per class, so constructing an error (which
 * refusals do under load) costs no per-instance property definitions.
 * @internal
 */
export function brandError(error: Error, name: string): void {
  const proto = Object.getPrototypeOf(error) as object;
  if (Object.hasOwn(proto, ERROR_BRAND)) return;
  Object.defineProperty(proto, ERROR_BRAND, { value: name, enumerable: false });
  Object.defineProperty(proto, 'name', {
    value: name,
    enumerable: false,
    configurable: true,
    writable: true,
  });
}

/** True when `value` carries the brand `name`, or (for foreign copies) that `name`. @internal */
export function hasBrand(value: unknown, name: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { [ERROR_BRAND]?: unknown; name?: unknown };
  return v[ERROR_BRAND] === name || v.name === name;
}
