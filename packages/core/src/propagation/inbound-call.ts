import type { Criticality, InboundCall } from './inbound.js';

/** What a server binding knows of an inbound call. */
export interface InboundCallInit {
  /** Aborts when the inbound call is cancelled (the binding's framework signal). */
  signal: AbortSignal;
  /** Absolute wall-clock deadline in ms, or `undefined` for none. */
  deadline: number | undefined;
  /** 1-based attempt of the caller's call. Defaults to 1. */
  attempt?: number;
  /** The caller's criticality. Defaults to none. */
  criticality?: Criticality | undefined;
}

/** An {@link InboundCall} whose overloaded mark the binding reads when it answers. */
export function createInboundCall(init: InboundCallInit): InboundCall {
  let overloaded = false;
  return {
    signal: init.signal,
    deadline: init.deadline,
    attempt: init.attempt ?? 1,
    criticality: init.criticality,
    markOverloaded(_reason: string) {
      overloaded = true;
    },
    get overloaded() {
      return overloaded;
    },
  };
}
