type Listener = (event: FetchEventSourceEvent) => void;

/** An event delivered by {@link FetchEventSource}. */
export interface FetchEventSourceEvent {
  /** Event type: `message`, a named event, `open` or `error`. */
  type: string;
  /** The event's data lines joined by `\n`. */
  data?: string;
  /** The stream's last event id at dispatch time. */
  lastEventId?: string;
  /** For `error`: what went wrong, so `TRPCClientError.from(event)` has a message. */
  message?: string;
  /** For `error`: the underlying fetch or stream error. */
  cause?: unknown;
}

/** Init of {@link FetchEventSource}: the standard `withCredentials` plus request headers. */
export interface FetchEventSourceInit {
  /** Ignored (no cookies in Node). */
  withCredentials?: boolean;
  /** Extra request headers. Defaults to none. */
  headers?: Record<string, string>;
}

/**
 * A minimal `EventSource` over `fetch` for runtimes without one (Node 20),
 * for `httpSubscriptionLink({ EventSource: FetchEventSource })`. Unlike the
 * browser's, it never reconnects by itself: a dropped stream closes it and
 * fires `error`, so the drop reaches the link chain (where `retryLink`
 * resumes from the last event id).
 */
export class FetchEventSource {
  /** `readyState` while the request is under way. */
  static readonly CONNECTING = 0;
  /** `readyState` once the response stream is open. */
  static readonly OPEN = 1;
  /** `readyState` after `close()`, a failed request or a dropped stream. */
  static readonly CLOSED = 2;
  /** `readyState` while the request is under way. */
  readonly CONNECTING = 0;
  /** `readyState` once the response stream is open. */
  readonly OPEN = 1;
  /** `readyState` after `close()`, a failed request or a dropped stream. */
  readonly CLOSED = 2;
  /** `CONNECTING`, `OPEN` or `CLOSED`; it never goes back from `CLOSED`. */
  readyState = 0;
  /** The stream's URL, as given. */
  readonly url: string;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly abort = new AbortController();
  private lastEventId = '';

  constructor(url: string, init: FetchEventSourceInit = {}) {
    this.url = url;
    void this.run(init.headers ?? {});
  }

  /** Calls `listener` for every event of `type` (`message`, a named event, `open` or `error`). */
  addEventListener(type: string, listener: Listener): void {
    const set = this.listeners.get(type) ?? new Set<Listener>();
    this.listeners.set(type, set);
    set.add(listener);
  }

  /** Stops calling `listener` for events of `type`. */
  removeEventListener(type: string, listener: Listener): void {
    this.listeners.get(type)?.delete(listener);
  }

  /** Aborts the request and closes the source; no `error` event follows. */
  close(): void {
    this.readyState = this.CLOSED;
    this.abort.abort();
  }

  private dispatch(event: FetchEventSourceEvent): void {
    for (const l of this.listeners.get(event.type) ?? []) l(event);
  }

  private fail(message: string, cause?: unknown): void {
    if (this.readyState === this.CLOSED) return;
    this.readyState = this.CLOSED;
    this.dispatch({ type: 'error', message, cause });
  }

  private async run(headers: Record<string, string>): Promise<void> {
    try {
      const res = await fetch(this.url, {
        headers: { accept: 'text/event-stream', ...headers },
        signal: this.abort.signal,
      });
      if (!res.ok || !res.body) {
        await res.body?.cancel();
        return this.fail(`EventSource request failed with HTTP ${res.status}`, {
          status: res.status,
        });
      }
      this.readyState = this.OPEN;
      this.dispatch({ type: 'open' });
      await this.read(res.body);
      this.fail('EventSource stream ended');
    } catch (error) {
      this.fail(error instanceof Error ? error.message : 'EventSource stream failed', error);
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        this.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
      }
      if (this.readyState === this.CLOSED) return;
    }
  }

  private parse(block: string): void {
    let type = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon === 0) continue;
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') this.lastEventId = value;
    }
    if (data.length === 0 && type === 'message') return;
    this.dispatch({ type, data: data.join('\n'), lastEventId: this.lastEventId });
  }
}
