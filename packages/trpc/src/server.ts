// @breakwater/trpc/server — the server binding (Node-only: it runs handlers in
// AsyncLocalStorage); the root entry stays browser-safe.
import { type InboundCall, PROPAGATION_HEADERS } from '@breakwater/core';
import { inboundFromHeaders, runInbound } from '@breakwater/core/node';

/** What {@link breakwaterContext} adds to a tRPC context. */
export interface BreakwaterServerContext {
  /** The inbound call the procedure serves. */
  readonly breakwater: {
    readonly inbound: InboundCall;
    /** Sets a response header (the don't-retry answer); absent when the adapter gives no response. */
    readonly setHeader: ((name: string, value: string) => void) | undefined;
  };
}

/** What `createContext` receives from tRPC's Node adapters (standalone, Express, Fastify's raw). */
export interface BreakwaterContextOptions {
  req: { headers: Record<string, string | string[] | undefined> };
  res?: { setHeader(name: string, value: string): unknown; headersSent?: boolean };
  info?: { signal?: AbortSignal };
}

/**
 * Reads the inbound call from the request headers Breakwater clients send
 * (`x-breakwater-timeout-ms`, `x-breakwater-attempt`,
 * `x-breakwater-criticality`); spread it into the context `createContext`
 * returns, and add {@link breakwaterProcedure} to the procedures.
 * @example
 * createHTTPServer({ router, createContext: (opts) => ({ ...breakwaterContext(opts) }) });
 */
export function breakwaterContext(opts: BreakwaterContextOptions): BreakwaterServerContext {
  const { req, res } = opts;
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const signal = opts.info?.signal ?? new AbortController().signal;
  return {
    breakwater: {
      inbound: inboundFromHeaders(header, signal),
      setHeader:
        res === undefined
          ? undefined
          : (name, value) => {
              if (res.headersSent !== true) res.setHeader(name, value);
            },
    },
  };
}

interface ProcedureOptions<R> {
  ctx: unknown;
  next: () => Promise<R>;
}

/**
 * A tRPC procedure middleware that runs the procedure serving its inbound
 * call: Breakwater clients inside it inherit the caller's deadline (less
 * `propagate.marginMs`), cancellation and attempt, with no code in the
 * procedure. When a downstream call ended overloaded, a failing answer
 * carries `x-breakwater-retry: no`. Needs {@link breakwaterContext} in the context.
 * @example
 * const procedure = t.procedure.use(breakwaterProcedure);
 */
export async function breakwaterProcedure<R extends { ok: boolean }>(
  opts: ProcedureOptions<R>,
): Promise<R> {
  const bound = (opts.ctx as Partial<BreakwaterServerContext> | undefined)?.breakwater;
  if (bound === undefined) return opts.next();
  const result = await runInbound(bound.inbound, opts.next);
  if (!result.ok && bound.inbound.overloaded) {
    bound.setHeader?.(PROPAGATION_HEADERS.http.retry, 'no');
  }
  return result;
}
