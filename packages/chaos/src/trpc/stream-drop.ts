import type { ServerResponse } from 'node:http';

// A server-sent data event (tracked events carry `id:`; named events like `ping` do not count).
const DATA_EVENT = /^data:/m;
const NAMED_EVENT = /^event:/m;

/**
 * Cuts the connection right after the `n`-th data event has been written, as
 * a crashing server or a proxy timeout would: the client sees the stream
 * end without tRPC's `return` event.
 * @internal
 */
export function cutStreamAfter(res: ServerResponse, n: number, onCut: () => void): void {
  let seen = 0;
  const decoder = new TextDecoder();
  const write = res.write.bind(res) as (chunk: unknown, cb?: () => void) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      typeof chunk === 'string'
        ? chunk
        : chunk instanceof Uint8Array
          ? decoder.decode(chunk)
          : String(chunk);
    if (seen < n && DATA_EVENT.test(text) && !NAMED_EVENT.test(text)) {
      seen++;
      if (seen === n) {
        onCut();
        // Destroy only once the chunk is flushed, so event n itself arrives.
        return write(chunk, () => res.socket?.destroy());
      }
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof res.write;
}
