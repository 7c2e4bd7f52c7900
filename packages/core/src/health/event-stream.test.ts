import { describe, expect, it } from 'vitest';
import { EventStreamReader } from './event-stream.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('EventStreamReader', () => {
  it('joins a line split anywhere, a multi-byte character included, and strips CR', () => {
    const seen: string[] = [];
    const reader = new EventStreamReader(1024, (data) => seen.push(data));
    const all = bytes('data: café\r\ndata: ok\n: comment\n\ndata:x\n\n');
    // Every byte its own chunk: "é" (two bytes) arrives in two pieces.
    for (const byte of all) expect(reader.push(Uint8Array.of(byte))).toBe(true);
    expect(seen).toEqual(['café\nok', 'x']);
  });

  it('takes an event of exactly maxEventBytes and refuses one byte more, a blank line starting over', () => {
    const event = 'data: 1234\n\n'; // 12 bytes
    const fits = new EventStreamReader(12, () => {});
    expect(fits.push(bytes(event.repeat(3)))).toBe(true);
    const over = new EventStreamReader(11, () => {});
    expect(over.push(bytes(event))).toBe(false);
    const endless = new EventStreamReader(12, () => {});
    expect(endless.push(bytes('data: 123456'))).toBe(true);
    expect(endless.push(bytes('7'))).toBe(false);
  });
});
