/**
 * Breakwater's server bindings (issue 33), as the chain's servers use them:
 * one per adapter, each putting the inbound call's deadline, cancellation
 * and attempt into the ambient context the outbound Breakwater clients read.
 */
import { breakwaterServerInterceptor } from '@breakwater/grpc-js';
import { breakwaterServerMiddleware } from '@breakwater/nice-grpc';
import {
  type BreakwaterContextOptions,
  breakwaterContext,
  breakwaterProcedure,
} from '@breakwater/trpc/server';

/** What a bound chain server adds to its framework's server. */
export interface ServerBindings {
  /** grpc-js: a server interceptor. */
  grpcInterceptor: typeof breakwaterServerInterceptor;
  /** nice-grpc: a server middleware. */
  niceMiddleware: typeof breakwaterServerMiddleware;
  /** tRPC: the procedure middleware. */
  trpcMiddleware: typeof breakwaterProcedure;
  /** tRPC: what the binding adds to createContext's result. */
  trpcContext(opts: BreakwaterContextOptions): object;
}

/** The bindings as each adapter's README sets them up. */
export const breakwaterBindings: ServerBindings = {
  grpcInterceptor: breakwaterServerInterceptor,
  niceMiddleware: breakwaterServerMiddleware,
  trpcMiddleware: breakwaterProcedure,
  trpcContext: breakwaterContext,
};
