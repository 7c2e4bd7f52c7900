import type { InterceptingCall, NextCall } from '@grpc/grpc-js';

/**
 * What every link of a grpc-js client call chain implements (grpc-js does not
 * export the interface by name; `NextCall` returns it).
 * @internal
 */
export type CallLink = ReturnType<NextCall>;

/** grpc-js's `AuthContext` (not exported by name). @internal */
export type AuthContextLike = ReturnType<InterceptingCall['getAuthContext']>;
