/**
 * Brand shared by every Breakwater error. `Symbol.for` makes two installed
 * copies of the package agree, which `instanceof` cannot.
 * @internal
 */
export const ERROR_BRAND: unique symbol = Symbol.for('breakwater.error') as never;

/** Stamps `error` with its class name, as `name` and as the brand. @internal */
export function brandError(error: Error, name: string): void {
  Object.defineProperty(error, ERROR_BRAND, { value: name, enumerable: false });
  Object.defineProperty(error, 'name', {
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
