const LF = 0x0a;

/**
 * Reads a `text/event-stream` as it arrives and hands each event's data to
 * `onData`. Only the bytes of a new chunk are scanned. An event — its lines up
 * to the blank line that ends it, comments and newlines included — may hold
 * at most `maxEventBytes`: a stream whose current event grows past it (a line
 * that never ends, data lines that never reach a blank line) is refused, so
 * what the reader holds never exceeds that bound.
 * @internal
 */
export class EventStreamReader {
  /** The pieces of the line being read, whose newline has not arrived yet. */
  private partial: Uint8Array[] = [];
  /** The data lines of the event being read. */
  private data: string[] = [];
  /** Bytes of the event being read so far. */
  private eventBytes = 0;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly maxEventBytes: number,
    private readonly onData: (data: string) => void,
  ) {}

  /** Reads `chunk`; false once the current event is larger than `maxEventBytes` (stop reading). */
  push(chunk: Uint8Array): boolean {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(LF, start);
      const end = newline < 0 ? chunk.length : newline + 1;
      this.eventBytes += end - start;
      if (this.eventBytes > this.maxEventBytes) return false;
      if (newline < 0) {
        // Copied: a reference would keep the whole chunk alive.
        this.partial.push(chunk.slice(start));
        return true;
      }
      this.line(this.takeLine(chunk.subarray(start, newline)));
      start = end;
    }
    return true;
  }

  /** The text of the line that ends with `last`, its earlier pieces included. */
  private takeLine(last: Uint8Array): string {
    let text = '';
    for (const piece of this.partial) text += this.decoder.decode(piece, { stream: true });
    this.partial = [];
    text += this.decoder.decode(last);
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  }

  private line(line: string): void {
    if (line === '') {
      this.eventBytes = 0;
      if (this.data.length === 0) return;
      const value = this.data.join('\n');
      this.data = [];
      this.onData(value);
    } else if (line.startsWith('data:')) {
      this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}
