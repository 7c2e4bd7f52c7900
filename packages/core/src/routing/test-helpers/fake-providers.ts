import { createManualClock, type ManualClock } from '../../time/manual-clock.js';
import { createRouter } from '../router.js';
import type { Router, RouterOptions } from '../types.js';

/** A fake provider resource: records calls; behaviour scripted per call. @internal */
export interface FakeResource {
  id: string;
  calls: number;
  /** Signals the operation received, in order. */
  signals: AbortSignal[];
  /** What the next call does: value, error, or a latency before a value. */
  behave: (call: number, signal: AbortSignal) => Promise<string>;
}

/** Creates a fake resource that answers `ok:<id>` after `latencyMs` of virtual time. @internal */
export function fake(id: string, clock: ManualClock, latencyMs = 0): FakeResource {
  return {
    id,
    calls: 0,
    signals: [],
    behave: async (_call, signal) => {
      if (latencyMs > 0) await clock.sleep(latencyMs, signal);
      if (signal.aborted) throw signal.reason;
      return `ok:${id}`;
    },
  };
}

/** The operation used by router tests: delegates to the resource's script. @internal */
export function call(r: FakeResource, ctx: { signal: AbortSignal }): Promise<string> {
  r.calls++;
  r.signals.push(ctx.signal);
  return r.behave(r.calls, ctx.signal);
}

/** Makes a resource fail every call with `Error(<message>)`. @internal */
export function failing(r: FakeResource, message = `${r.id} down`): FakeResource {
  r.behave = async () => {
    throw new Error(message);
  };
  return r;
}

/** A router over fake resources `ids`, on a manual clock. @internal */
export function setup(
  ids: string[],
  options: Omit<RouterOptions<FakeResource>, 'providers'> = {},
): { clock: ManualClock; res: Record<string, FakeResource>; router: Router<FakeResource> } {
  const clock = createManualClock(1_000_000);
  const res: Record<string, FakeResource> = {};
  for (const id of ids) res[id] = fake(id, clock);
  const router = createRouter<FakeResource>({
    providers: ids.map((id) => ({ id, resource: res[id] as FakeResource })),
    clock,
    sleep: clock.sleep,
    ...options,
  });
  return { clock, res, router };
}
