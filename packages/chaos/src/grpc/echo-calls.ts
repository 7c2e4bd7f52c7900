import { type CallOptions, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { EchoClient } from './echo-client.js';
import type { EchoRequest, EchoResponse } from './echo-proto.js';
import { CALL_ID_HEADER } from './server.js';

/** Outcome of one Echo call: the response, or the grpc-js `ServiceError`. */
export type EchoOutcome =
  | { ok: true; value: EchoResponse; error?: undefined }
  | { ok: false; error: ServiceError; value?: undefined };

/** Metadata carrying a call id, so the server counts the call's attempts. */
export function callMetadata(callId?: string): Metadata {
  const md = new Metadata();
  if (callId !== undefined) md.set(CALL_ID_HEADER, callId);
  return md;
}

/**
 * Calls `Unary` (or `UnaryUnsafe`) and settles with the outcome instead of throwing,
 * which keeps test and load-generator code flat.
 */
export function echoUnary(
  client: EchoClient,
  request: EchoRequest,
  options: { callId?: string; callOptions?: CallOptions; method?: 'Unary' | 'UnaryUnsafe' } = {},
): Promise<EchoOutcome> {
  return new Promise((resolve) => {
    client[options.method ?? 'Unary'](
      request,
      callMetadata(options.callId),
      options.callOptions ?? {},
      (error: ServiceError | null, value?: EchoResponse) => {
        resolve(error ? { ok: false, error } : { ok: true, value: value as EchoResponse });
      },
    );
  });
}

/** Reads a `ServerStream` call to its end: the messages received and the final error, if any. */
export function echoServerStream(
  client: EchoClient,
  request: EchoRequest,
  options: { callId?: string; callOptions?: CallOptions } = {},
): Promise<{ messages: EchoResponse[]; error: ServiceError | undefined }> {
  return new Promise((resolve) => {
    const messages: EchoResponse[] = [];
    const call = client.ServerStream(
      request,
      callMetadata(options.callId),
      options.callOptions ?? {},
    );
    call.on('data', (m: EchoResponse) => messages.push(m));
    call.on('error', (error: ServiceError) => resolve({ messages, error }));
    call.on('end', () => resolve({ messages, error: undefined }));
  });
}

/** Writes `messages` on a `Bidi` call and collects the echoes (rejects with the `ServiceError`). */
export function echoBidi(
  client: EchoClient,
  messages: readonly string[],
  options: { callId?: string; callOptions?: CallOptions } = {},
): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const out: string[] = [];
    const call = client.Bidi(callMetadata(options.callId), options.callOptions ?? {});
    call.on('data', (m: EchoResponse) => out.push(m.message));
    call.on('error', reject);
    call.on('end', () => resolve(out));
    for (const message of messages) call.write({ message });
    call.end();
  });
}
