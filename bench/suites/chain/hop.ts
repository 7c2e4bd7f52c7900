/**
 * The work of one service of the chain, the same in every stack: B and C
 * call the next hop once and answer with its outcome; D answers as the
 * scenario says (ok, fail, fail 30%, hang until cancelled). The handler
 * forwards the root request id — the only thing it passes on by hand, as
 * an application forwards a trace id — and nothing else: no signal, no
 * deadline, no attempt number.
 */
import { attemptRandom } from '@breakwater/chaos';
import type { Hop } from '../../harness/chain-figures.js';

/** Header / metadata key carrying the root request id down the chain. */
export const ROOT_ID_HEADER = 'x-root-id';
/** Seed of D's 30% failures: every stack meets the same failing attempts. */
const FAULT_SEED = 33;
const FAIL_SHARE = 0.3;

/** How D answers. */
export type LeafMode = 'ok' | 'fail' | 'fail30' | 'hang';

/** How a call failed, translated between protocols by each server and client. */
export type FailureKind = 'unavailable' | 'deadline' | 'cancelled';

/** A failed hop: what a server answers and what a client maps a downstream error to. */
export class HopFailure extends Error {
  override readonly name = 'HopFailure';
  constructor(
    readonly kind: FailureKind,
    message: string,
  ) {
    super(message);
  }
}

/** The kind of `error` (a `HopFailure` keeps its own; anything else is `unavailable`). */
export const failureKind = (error: unknown): FailureKind =>
  error instanceof HopFailure ? error.kind : 'unavailable';

/** The next hop, as the handler calls it: resolves or rejects with a `HopFailure`. */
export interface Downstream {
  call(rootId: string): Promise<void>;
  close(): void;
}

/** What every server kind runs per attempt: `signal` is the framework's own cancellation. */
export type HopHandler = (rootId: string, signal: AbortSignal) => Promise<void>;

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new HopFailure('cancelled', 'cancelled while hanging'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** D's answers in `mode`; counts the attempts of each root request for the 30% draws. */
function leafHandler(mode: () => LeafMode): HopHandler {
  const attempts = new Map<string, number>();
  return async (rootId, signal) => {
    const attempt = (attempts.get(rootId) ?? 0) + 1;
    attempts.set(rootId, attempt);
    switch (mode()) {
      case 'ok':
        return;
      case 'fail':
        throw new HopFailure('unavailable', 'D fails every call');
      case 'fail30':
        if (attemptRandom(FAULT_SEED, rootId, attempt)() < FAIL_SHARE) {
          throw new HopFailure('unavailable', 'D fails 30% of calls');
        }
        return;
      case 'hang':
        return untilAborted(signal);
    }
  };
}

/** The handler of `hop`: D answers by `mode`, the others call `next()` (read per call: resets replace it). */
export function hopHandler(
  hop: Hop,
  next: () => Downstream | undefined,
  mode: () => LeafMode,
): HopHandler {
  if (hop === 'D') return leafHandler(mode);
  return async (rootId) => {
    const downstream = next();
    if (!downstream) throw new HopFailure('unavailable', `${hop} has no next hop`);
    await downstream.call(rootId);
  };
}
