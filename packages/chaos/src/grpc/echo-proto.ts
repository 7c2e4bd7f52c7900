import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';

/** Fully qualified name of the chaos Echo service. */
export const ECHO_SERVICE = 'breakwater.chaos.v1.Echo';

/** Full method paths of the Echo service, as grpc-js interceptors see them. */
export const ECHO_METHODS = {
  /** The idempotent unary echo. */
  unary: `/${ECHO_SERVICE}/Unary`,
  /** The unary echo without an idempotency marking. */
  unaryUnsafe: `/${ECHO_SERVICE}/UnaryUnsafe`,
  /** The server-streaming echo. */
  serverStream: `/${ECHO_SERVICE}/ServerStream`,
  /** The client-streaming echo. */
  clientStream: `/${ECHO_SERVICE}/ClientStream`,
  /** The bidirectional echo. */
  bidi: `/${ECHO_SERVICE}/Bidi`,
} as const;

/**
 * The `.proto` source of the chaos Echo service. It is shipped as text so the
 * package works from both its ESM and CJS builds without locating asset files;
 * `loadEchoPackageDefinition()` hands it to proto-loader.
 */
export const ECHO_PROTO_SOURCE = `syntax = "proto3";

package breakwater.chaos.v1;

// An echo service whose replicas misbehave on command.
service Echo {
  // Read-only echo: marked safe to retry and hedge.
  rpc Unary(EchoRequest) returns (EchoResponse) {
    option idempotency_level = NO_SIDE_EFFECTS;
  }
  // The same echo without an idempotency marking: retries need an opt-in.
  rpc UnaryUnsafe(EchoRequest) returns (EchoResponse);
  // Sends \`count\` responses (default 3).
  rpc ServerStream(EchoRequest) returns (stream EchoResponse) {
    option idempotency_level = NO_SIDE_EFFECTS;
  }
  // Answers once with the received messages joined by ",".
  rpc ClientStream(stream EchoRequest) returns (EchoResponse);
  // Echoes every message.
  rpc Bidi(stream EchoRequest) returns (stream EchoResponse);
}

message EchoRequest {
  string message = 1;
  // Responses to stream (ServerStream). 0 means 3.
  uint32 count = 2;
}

message EchoResponse {
  string message = 1;
  // Replica that answered.
  string replica = 2;
  // Attempts this replica has seen for the call id, this one included.
  uint32 attempt = 3;
  // Position of this message in a response stream, from 0.
  uint32 index = 4;
}
`;

/** Request message of the Echo service. */
export interface EchoRequest {
  /** Text to echo back. Defaults to `''`. */
  message?: string;
  /** Responses `ServerStream` sends; 0 means 3. Defaults to 3. */
  count?: number;
}

/** Response message of the Echo service. */
export interface EchoResponse {
  /** The echoed text (`ClientStream`: the received messages joined by `,`). */
  message: string;
  /** Name of the replica that answered. */
  replica: string;
  /** Attempts this replica has seen for the call id, this one included. */
  attempt: number;
  /** Position of this message in a response stream, from 0 (`ClientStream`: messages received). */
  index: number;
}

let cached: PackageDefinition | undefined;

/**
 * Loads the Echo service with proto-loader (cached). Method definitions keep
 * their `options.idempotency_level`, so adapters can read which methods are safe.
 */
export function loadEchoPackageDefinition(): PackageDefinition {
  if (cached) return cached;
  const hash = createHash('sha256').update(ECHO_PROTO_SOURCE).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), 'breakwater-chaos-proto');
  const file = join(dir, `echo-${hash}.proto`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, ECHO_PROTO_SOURCE);
  }
  cached = loadSync(file, { keepCase: false, defaults: true, longs: Number });
  return cached;
}
