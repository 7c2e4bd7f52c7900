import { type CallOptions, Metadata, type ServiceError } from '@grpc/grpc-js';
import type { EchoClient } from './echo-client.js';
import type { EchoRequest, EchoResponse } from './echo-proto.js';
import { CALL_ID_HEADER } from './server.js';

/** Outcome of one Echo call: the response, or the grpc-js `ServiceError`. */
export type EchoOutcome =
  | {
      /** True: the call succeeded. */
      ok: true;
      /** The server's response. */
      value: EchoResponse;
      /** Always absent on success. */
      error?: undefined;
    }
  | {
      /** False: the call ended with a non-OK status. */
      ok: false;
      /** The grpc-js error, with `code`, `details` and trailing `metadata`. */
      error: ServiceError;
      /** Always absent on failure. */
      value?: undefined;
    };

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
  options: {
    /** Sent as the call-id header so the server counts this call's attempts. Defaults to none. */
    callId?: string;
    /** grpc-js call options (deadline, interceptors...). Defaults to none. */
    callOptions?: CallOptions;
    /** Which unary method to call. Defaults to `'Unary'` (the idempotent one). */
    method?: 'Unary' | 'UnaryUnsafe';
  } = {},
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
  options: {
    /** Sent as the call-id header so the server counts this call's attempts. Defaults to none. */
    callId?: string;
    /** grpc-js call options (deadline, interceptors...). Defaults to none. */
    callOptions?: CallOptions;
  } = {},
): Promise<{
  /** Every message received before the stream ended, in order. */
  messages: EchoResponse[];
  /** The error that ended the stream, or `undefined` when it ended with OK. */
  error: ServiceError | undefined;
}> {
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
  options: {
    /** Sent as the call-id header so the server counts this call's attempts. Defaults to none. */
    callId?: string;
    /** grpc-js call options (deadline, interceptors...). Defaults to none. */
    callOptions?: CallOptions;
  } = {},
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
