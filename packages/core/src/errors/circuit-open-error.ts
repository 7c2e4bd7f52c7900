import { brandError, hasBrand } from './brand.js';

/** Options for {@link CircuitOpenError}. */
export interface CircuitOpenErrorOptions {
  /** Milliseconds until the circuit may admit a probe. Defaults to 0. */
  retryAfterMs?: number;
  /** Name of the circuit (method, provider, endpoint), for messages and events. Defaults to none. */
  circuit?: string;
  /** The error that last opened the circuit, if known. Defaults to none. */
  cause?: unknown;
}

/** A call was refused without running because its circuit is open. */
export class CircuitOpenError extends Error {
  /** Milliseconds until a probe may be admitted. */
  readonly retryAfterMs: number;
  /** Name of the circuit that refused, when it has one. */
  readonly circuit: string | undefined;

  constructor(options: CircuitOpenErrorOptions = {}) {
    const retryAfterMs = Math.max(0, options.retryAfterMs ?? 0);
    const where = options.circuit ? ` "${options.circuit}"` : '';
    super(
      `Circuit${where} is open; retry after ${Math.ceil(retryAfterMs)} ms`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    brandError(this, 'CircuitOpenError');
    this.retryAfterMs = retryAfterMs;
    this.circuit = options.circuit;
  }
}

/** True for a {@link CircuitOpenError} from any copy of Breakwater. */
export function isCircuitOpenError(e: unknown): e is CircuitOpenError {
  return hasBrand(e, 'CircuitOpenError');
}
