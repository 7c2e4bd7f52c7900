import type { TrailerGetter } from '@breakwater/core/grpc';

/** A {@link TrailerGetter} over grpc-js `Metadata` (first value, as text). */
export function trailerGetter(
  metadata:
    | {
        /** Every value stored under `key`, as grpc-js `Metadata.get` returns them. */
        get(key: string): unknown[];
      }
    | undefined,
): TrailerGetter | undefined {
  if (metadata === undefined) return undefined;
  return (key) => {
    const value = metadata.get(key)[0];
    return value === undefined ? undefined : String(value);
  };
}
