import { runOpenLoop } from './open-loop.js';

/** One call {@link offerCalls} made. */
export interface OfferedCall {
  /** When it started, in ms after the first call did. */
  startedAtMs: number;
  /** Whether it resolved. */
  ok: boolean;
  /** What it rejected with; `undefined` when it resolved. */
  error: unknown;
}

/** Options of {@link offerCalls}. */
export interface OfferCallsOptions {
  /** Calls started per second. Required; > 0. */
  rate: number;
  /** How long calls keep being started, in ms. Required; >= 0. */
  durationMs: number;
  /** Makes call `index`; a rejection is a failed call. */
  call: (index: number) => Promise<unknown>;
}

/**
 * Offers `rate` calls a second for `durationMs` ({@link runOpenLoop}: a slow
 * target never slows the offered load) and resolves, once every call has
 * settled, with how each one started and ended, in start order.
 * @example
 * const calls = await offerCalls({ rate: 100, durationMs: 3_000, call: () => client.echo.query('x') });
 * const goodput = goodputPerSecond(calls, { fromMs: 1_000, toMs: 3_000 });
 */
export async function offerCalls(options: OfferCallsOptions): Promise<OfferedCall[]> {
  const calls: OfferedCall[] = [];
  let firstStartedAt: number | undefined;
  await runOpenLoop({
    rate: options.rate,
    durationMs: options.durationMs,
    send: async ({ index, startedAt }) => {
      // Call 0 starts first: the schedule starts calls in index order.
      firstStartedAt ??= startedAt;
      const startedAtMs = startedAt - firstStartedAt;
      calls[index] = await options.call(index).then(
        () => ({ startedAtMs, ok: true, error: undefined }),
        (error: unknown) => ({ startedAtMs, ok: false, error }),
      );
    },
  });
  return calls;
}

/**
 * Goodput: calls that succeeded per second, of those started in `[fromMs, toMs)`
 * (a call with a deadline succeeds only within it).
 */
export function goodputPerSecond(
  calls: readonly OfferedCall[],
  { fromMs, toMs }: { fromMs: number; toMs: number },
): number {
  const inWindow = calls.filter((c) => c.startedAtMs >= fromMs && c.startedAtMs < toMs);
  return (inWindow.filter((c) => c.ok).length * 1_000) / (toMs - fromMs);
}
