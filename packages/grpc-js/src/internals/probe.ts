import type { InterceptorOptions } from '@grpc/grpc-js';

/** Marks the options of a call a half-open circuit admitted as its probe. */
const PROBE: unique symbol = Symbol('breakwater.circuitProbe');

type Marked = InterceptorOptions & { [PROBE]?: true };

/**
 * The options of a call the circuit stage admitted as a half-open probe: a
 * copy carrying the mark, which the attempt stage reads to make one attempt
 * only. Copied, not mutated: grpc-js may share the object. Only probes pay for it.
 * @internal
 */
export function markProbe(options: InterceptorOptions): InterceptorOptions {
  const marked: Marked = { ...options };
  marked[PROBE] = true;
  return marked;
}

/** True for options {@link markProbe} returned (or a copy of them). @internal */
export function isProbeCall(options: InterceptorOptions): boolean {
  return (options as Marked)[PROBE] === true;
}
