/**
 * Breakwater's server bindings (issue 33), as the chain's servers use them:
 * one per adapter, each putting the inbound call's deadline, cancellation
 * and attempt into the ambient context the outbound Breakwater clients read.
 */

import type { IncomingMessage } from 'node:http';
import type { ServerInterceptor } from '@grpc/grpc-js';
import type { ServerMiddleware } from 'nice-grpc';

/** What a bound chain server adds to its framework's server. */
export interface ServerBindings {
  /** grpc-js: a server interceptor. */
  grpcInterceptor(): ServerInterceptor;
  /** nice-grpc: a server middleware. */
  niceMiddleware(): ServerMiddleware;
  /** tRPC: the procedure builder with the binding's middleware. */
  trpcProcedure<P>(t: { procedure: P }): P;
  /** tRPC: what the binding adds to createContext's result. */
  trpcContext(req: IncomingMessage): object;
}
