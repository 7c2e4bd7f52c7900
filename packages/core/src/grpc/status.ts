/**
 * gRPC status codes by name (the numbers every gRPC implementation sends on
 * the wire), so code that classifies statuses need not load `@grpc/grpc-js`.
 */
export const GrpcStatus = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const);

const NAMES: readonly string[] = Object.keys(GrpcStatus);

/** The name of gRPC status `code` (`'UNAVAILABLE'` for 14), or the number as text for an unknown code. */
export function grpcStatusName(code: number): string {
  return NAMES[code] ?? String(code);
}

/** One of the {@link GrpcStatus} codes. */
export type GrpcStatusCode = (typeof GrpcStatus)[keyof typeof GrpcStatus];
