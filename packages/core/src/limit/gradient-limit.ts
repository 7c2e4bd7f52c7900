import {
  checkOptions,
  describeValue,
  keysOf,
  optionalNumber,
  optionPath,
  optionRangeError,
  optionTypeError,
} from '../internal/validate.js';

/** Share of the limit each criticality may fill: `shares` of {@link AdaptiveConcurrencyOptions}. */
export interface CriticalityShares {
  /** `'default'` calls are admitted while fewer than this share of the limit is in flight; in (0, 1]. Defaults to 0.9. */
  default?: number;
  /** `'sheddable'` calls are admitted while fewer than this share of the limit is in flight; in (0, `default`]. Defaults to 0.5. */
  sheddable?: number;
}

/**
 * Parameters of the adaptive concurrency limit: `concurrency.adaptive` of
 * `ResilienceOptions` (`true` takes every default). The limit follows the
 * gradient of latency: while calls answer within `rttTolerance` times the
 * no-load latency (`minRtt`) it grows by one per round trip; beyond it, it is
 * cut in proportion (at most once per round trip); a dropped call (a timeout,
 * or the server saying it is overloaded) cuts it by `backoffRatio`.
 */
export interface AdaptiveConcurrencyOptions {
  /** The limit before any latency is seen; an integer in `[minLimit, maxLimit]`. Defaults to 20. */
  initialLimit?: number;
  /** The lowest the limit goes, and the limit while `minRtt` is measured; an integer >= 1. Defaults to 1. */
  minLimit?: number;
  /** The highest the limit goes; an integer >= `minLimit`. Defaults to 1 000. */
  maxLimit?: number;
  /** Latency, as a multiple of the no-load latency, that calls may reach before the limit is cut; in `[1, 10]`. Defaults to 1.5. */
  rttTolerance?: number;
  /** Weight of the gradient in a cut, in (0, 1]: 1 cuts straight to the limit the latency names, lower cuts gentler. Defaults to 0.5. */
  smoothing?: number;
  /** Factor a dropped call (a timeout, an overloaded server) multiplies the limit by; in `[0.5, 1)`. Defaults to 0.9. */
  backoffRatio?: number;
  /** How often the no-load latency is measured afresh, holding the limit at `minLimit` for `probeSamples` calls, in ms (> 0, `Infinity` for never). Defaults to 30 000. */
  probeIntervalMs?: number;
  /** Calls that one measurement of the no-load latency takes the lowest latency of; an integer in `[1, 1000]`. Defaults to 10. */
  probeSamples?: number;
  /** Share of the limit each criticality may fill (`'critical'`: all of it). Defaults to `{ default: 0.9, sheddable: 0.5 }`. */
  shares?: CriticalityShares;
}

/** Keys of {@link AdaptiveConcurrencyOptions}. @internal */
export const ADAPTIVE_CONCURRENCY_KEYS = keysOf<AdaptiveConcurrencyOptions>()([
  'initialLimit',
  'minLimit',
  'maxLimit',
  'rttTolerance',
  'smoothing',
  'backoffRatio',
  'probeIntervalMs',
  'probeSamples',
  'shares',
]);

const SHARES_KEYS = keysOf<CriticalityShares>()(['default', 'sheddable']);

/** The defaults of {@link AdaptiveConcurrencyOptions}. */
export const DEFAULT_ADAPTIVE_CONCURRENCY = Object.freeze({
  initialLimit: 20,
  minLimit: 1,
  maxLimit: 1_000,
  rttTolerance: 1.5,
  smoothing: 0.5,
  backoffRatio: 0.9,
  probeIntervalMs: 30_000,
  probeSamples: 10,
  shares: Object.freeze({ default: 0.9, sheddable: 0.5 }),
});

/** {@link AdaptiveConcurrencyOptions} validated, every default filled in. @internal */
export type GradientSettings = Readonly<
  Required<Omit<AdaptiveConcurrencyOptions, 'shares'>> & { shares: Required<CriticalityShares> }
>;

/**
 * Validates `concurrency.adaptive` (`true`, or its options); paths are
 * relative to it, so callers wrap this in `optionPath`.
 * @internal
 */
export function resolveAdaptiveConcurrency(
  value: true | AdaptiveConcurrencyOptions,
): GradientSettings {
  const d = DEFAULT_ADAPTIVE_CONCURRENCY;
  if (value === true) return d;
  checkOptions(undefined, value, ADAPTIVE_CONCURRENCY_KEYS, '', false);
  const whole = { integer: true, min: 1 };
  const minLimit = optionalNumber('minLimit', value.minLimit, d.minLimit, whole);
  const maxLimit = optionalNumber('maxLimit', value.maxLimit, Math.max(d.maxLimit, minLimit), {
    integer: true,
    min: minLimit,
  });
  const initialLimit = optionalNumber(
    'initialLimit',
    value.initialLimit,
    Math.min(Math.max(d.initialLimit, minLimit), maxLimit),
    { integer: true, min: minLimit, max: maxLimit },
  );
  checkOptions(undefined, value.shares, SHARES_KEYS, 'shares');
  const defaultShare = optionalNumber('shares.default', value.shares?.default, d.shares.default, {
    above: 0,
    max: 1,
  });
  const sheddable = optionalNumber(
    'shares.sheddable',
    value.shares?.sheddable,
    Math.min(d.shares.sheddable, defaultShare),
    { above: 0, max: 1 },
  );
  if (sheddable > defaultShare) {
    throw optionRangeError(
      'shares.sheddable',
      `must be <= shares.default (${defaultShare}), got ${sheddable}: a sheddable call may never use more of the limit than a default one`,
    );
  }
  return {
    initialLimit,
    minLimit,
    maxLimit,
    rttTolerance: optionalNumber('rttTolerance', value.rttTolerance, d.rttTolerance, {
      min: 1,
      max: 10,
    }),
    smoothing: optionalNumber('smoothing', value.smoothing, d.smoothing, { above: 0, max: 1 }),
    backoffRatio: optionalNumber('backoffRatio', value.backoffRatio, d.backoffRatio, {
      min: 0.5,
      max: 1,
    }),
    probeIntervalMs: optionalNumber('probeIntervalMs', value.probeIntervalMs, d.probeIntervalMs, {
      above: 0,
      allowInfinity: true,
    }),
    probeSamples: optionalNumber('probeSamples', value.probeSamples, d.probeSamples, {
      integer: true,
      min: 1,
      max: 1_000,
    }),
    shares: { default: defaultShare, sheddable },
  };
}

/** A measurement of the no-load latency in progress. */
interface Probe {
  /** Only calls started from here on ran at the probe's low concurrency. */
  readonly startedAt: number;
  samples: number;
  lowest: number;
}

/**
 * The limit estimate of one target, from the latency of its answered calls.
 *
 * The baseline is the no-load latency `minRtt`, as in Envoy's gradient
 * controller, rather than the long-run average of Netflix's Gradient2, which under sustained
 * overload drifts up to the queueing latency and stops cutting. `minRtt` is
 * the lowest latency seen since it was last measured (at first, the fastest
 * of the first calls: a FIFO server answers its first wave without queueing
 * as many as it has workers). It is measured afresh every `probeIntervalMs`
 * (the target may have become slower for good), by holding the limit at
 * `minLimit` for `probeSamples` calls.
 * @internal
 */
export class GradientLimit {
  /** The limit as a real number: it grows by fractions, one per round trip. */
  private estimate: number;
  private minRtt = Number.POSITIVE_INFINITY;
  /** When the limit was last cut: answers of calls started before it were part of what caused that cut. */
  private cutAt = Number.NEGATIVE_INFINITY;
  private nextProbeAt: number;
  private probe: Probe | undefined;

  constructor(
    private readonly s: GradientSettings,
    now: number,
  ) {
    this.estimate = s.initialLimit;
    this.nextProbeAt = now + s.probeIntervalMs;
  }

  /** Calls that may be in flight now: an integer in `[minLimit, maxLimit]`. */
  get limit(): number {
    return this.probe === undefined ? Math.floor(this.estimate) : this.s.minLimit;
  }

  /** The no-load latency the limit is judged against, in ms (`Infinity` before the first answer). */
  get noLoadRttMs(): number {
    return this.minRtt;
  }

  /**
   * A call started at `startedAt`, when `inFlight` calls (itself included)
   * were in flight, was answered at `now`.
   */
  answered(startedAt: number, now: number, inFlight: number): void {
    const rtt = Math.max(0, now - startedAt);
    const probe = this.probe;
    if (probe !== undefined) {
      if (startedAt >= probe.startedAt) this.probed(probe, rtt, now);
      return;
    }
    if (now >= this.nextProbeAt) {
      this.startProbe(now);
      return;
    }
    if (rtt < this.minRtt) this.minRtt = rtt;
    // A call that ran with less than half the limit in use says nothing about the limit: the
    // limit neither grows for it (an idle client learns nothing of the target's capacity) nor
    // falls for its latency, which this client's concurrency did not cause.
    if (inFlight * 2 < this.estimate) return;
    const allowed = this.s.rttTolerance * this.minRtt;
    if (rtt <= allowed) {
      this.estimate = Math.min(this.s.maxLimit, this.estimate + 1 / this.estimate);
    } else if (startedAt >= this.cutAt) {
      // At most halved, so one slow outlier cannot shed most of the traffic.
      const gradient = Math.max(0.5, allowed / rtt);
      this.cut(this.estimate * (1 - this.s.smoothing * (1 - gradient)), now);
    }
  }

  /** A call started at `startedAt` was dropped at `now`: it timed out, or the target said it is overloaded. */
  dropped(startedAt: number, now: number): void {
    if (this.probe !== undefined || startedAt < this.cutAt) return;
    this.cut(this.estimate * this.s.backoffRatio, now);
  }

  private cut(to: number, now: number): void {
    this.estimate = Math.max(this.s.minLimit, to);
    this.cutAt = now;
  }

  private startProbe(now: number): void {
    this.probe = { startedAt: now, samples: 0, lowest: Number.POSITIVE_INFINITY };
  }

  private probed(probe: Probe, rtt: number, now: number): void {
    probe.lowest = Math.min(probe.lowest, rtt);
    probe.samples++;
    if (probe.samples < this.s.probeSamples) return;
    this.probe = undefined;
    this.minRtt = probe.lowest;
    this.cutAt = now;
    this.nextProbeAt = now + this.s.probeIntervalMs;
  }
}

/**
 * `concurrency.adaptive` of a `concurrency` option already checked for
 * unknown keys: its settings, or `undefined` when it is off (the static
 * `limit` applies). Errors name the full option path.
 * @internal
 */
export function resolveAdaptiveOf(concurrency: {
  adaptive?: true | AdaptiveConcurrencyOptions | false;
  limit?: number;
  maxQueue?: number;
}): GradientSettings | undefined {
  const adaptive = concurrency.adaptive;
  if (adaptive === undefined || adaptive === false) return undefined;
  for (const key of ['limit', 'maxQueue'] as const) {
    if (concurrency[key] !== undefined) {
      throw optionTypeError(
        `concurrency.${key}`,
        `must be left out with concurrency.adaptive, which discovers the limit and never queues (bound it with concurrency.adaptive.maxLimit)`,
      );
    }
  }
  if (adaptive !== true && (typeof adaptive !== 'object' || adaptive === null)) {
    throw optionTypeError(
      'concurrency.adaptive',
      `must be true, false or an object, got ${describeValue(adaptive)}`,
    );
  }
  return optionPath('concurrency.adaptive', () => resolveAdaptiveConcurrency(adaptive));
}
