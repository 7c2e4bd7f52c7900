import type { InterceptingCall, NextCall } from '@grpc/grpc-js';

/**
 * What every link of a grpc-js client call chain implements (grpc-js does not
 * export the interface by name; `NextCall` returns it).
 * @internal
 */
export type CallLink = ReturnType<NextCall>;

/**
 * grpc-js's `AuthContext` (not exported by name). `getAuthContext` arrived in
 * grpc-js 1.14; before it the type is `null`, so the declarations compile
 * against every version the peer range admits. @internal
 */
export type AuthContextLike = InterceptingCall extends { getAuthContext(): infer A } ? A : null;
