import type { RandomSource } from '@breakwater/core/time';
import { status as Status } from '@grpc/grpc-js';

/** How much latency a rule adds to an attempt. */
export type LatencySpec =
  /** Always `ms`. */
  | {
      /** Every attempt waits the same time. */
      kind: 'fixed';
      /** The delay in ms, >= 0. */
      ms: number;
    }
  /** Uniform in `[minMs, maxMs)`. */
  | {
      /** Each attempt draws its delay uniformly. */
      kind: 'uniform';
      /** Shortest delay in ms, >= 0. */
      minMs: number;
      /** Upper bound of the delay in ms (exclusive), >= `minMs`. */
      maxMs: number;
    }
  /** Long tail: `baseMs` always, plus `extraMs` for `percent`% of attempts ("5% of calls +300 ms"). */
  | {
      /** A fixed base with an occasional slow extra. */
      kind: 'tail';
      /** Share of attempts that get `extraMs`, in `[0, 100]`. */
      percent: number;
      /** Extra delay of the slow attempts in ms, >= 0. */
      extraMs: number;
      /** Delay every attempt gets in ms, >= 0. Defaults to 0. */
      baseMs?: number;
    };

/**
 * One line of a fault schedule. Rules are checked in order for every attempt;
 * latency from every matching rule adds up, and the first matching rule with
 * an outcome (`status`, `hang`, `dieAfterMessage`, `resetAfterRequest`, `failAfterMessages`)
 * decides the outcome.
 */
export interface GrpcFaultRule {
  /** Method names (`"Unary"`) or full paths this rule applies to. Defaults to every method. */
  methods?: readonly string[];
  /** Fraction of matching attempts affected, in `[0, 1]`. Defaults to 1. */
  rate?: number;
  /** Only the first `k` attempts the server sees for each call id. Defaults to every attempt. */
  firstAttempts?: number;
  /** Only attempts from the `n`-th on (1-based) of each call id; with `firstAttempts` it picks a range (`fromAttempt: 2, firstAttempts: 2` is the second attempt alone). Defaults to 1. */
  fromAttempt?: number;
  /** Status code to fail with. Defaults to `UNAVAILABLE` when `failAfterMessages` or `pushbackMs` is set, else no failure. */
  status?: Status;
  /** Status details text. Defaults to `"chaos: <CODE>"`. */
  details?: string;
  /** Value of the `grpc-retry-pushback-ms` trailer; a string is sent verbatim (for malformed values). Defaults to no trailer. */
  pushbackMs?: number | string;
  /** Latency added before the attempt is answered. Defaults to none. */
  latency?: LatencySpec;
  /** Never answer; the attempt ends only when the client cancels or its deadline passes. Defaults to false. */
  hang?: boolean;
  /** Streaming responses: send this many messages, then fail with `status`. Defaults to failing before the first. */
  failAfterMessages?: number;
  /**
   * Unary methods: send the response message, then die (the whole server shuts down at once,
   * so the call never gets its status): a replica that crashes between the answer and the
   * trailers. Defaults to false.
   */
  dieAfterMessage?: boolean;
  /**
   * Unary methods: once the request arrived, drop the connection under the call without an
   * answer (a replica, or a proxy in front of it, that resets mid-call after taking the
   * request); the server keeps accepting connections. Defaults to false.
   */
  resetAfterRequest?: boolean;
}

/** What the server does with one attempt, decided before it is handled. */
export interface AttemptPlan {
  /** Latency added before answering, in ms: the sum over every matching rule. */
  delayMs: number;
  /** True when the attempt is never answered (it ends when the client cancels). */
  hang: boolean;
  /** True when the server sends the unary response and then dies before the status. */
  dieAfterMessage: boolean;
  /** True when the server drops the connection under the call once the request arrived. */
  resetAfterRequest: boolean;
  /** Fail with this status (after `failAfterMessages` messages, when set). */
  fail:
    | {
        /** The status code to end the attempt with. */
        code: Status;
        /** The status details text. */
        details: string;
        /** Value of the `grpc-retry-pushback-ms` trailer, or `undefined` to send none. */
        pushback: string | undefined;
      }
    | undefined;
  /** Streaming responses sent before failing, or `undefined` to fail before the first. */
  failAfterMessages: number | undefined;
}

/** The attempt a plan is made for. */
export interface AttemptFacts {
  /** Full method path. */
  path: string;
  /** Short method name. */
  method: string;
  /** Attempts seen for this call id, this one included (1 without a call id). */
  attempt: number;
}

function checkRule(rule: GrpcFaultRule, i: number): void {
  const name = `faults[${i}]`;
  if (typeof rule !== 'object' || rule === null) {
    throw new TypeError(`${name} must be an object, got ${String(rule)}`);
  }
  if (rule.rate !== undefined && !(rule.rate >= 0 && rule.rate <= 1)) {
    throw new RangeError(`${name}.rate must be in [0, 1], got ${String(rule.rate)}`);
  }
  if (
    rule.firstAttempts !== undefined &&
    !(Number.isInteger(rule.firstAttempts) && rule.firstAttempts >= 0)
  ) {
    throw new RangeError(
      `${name}.firstAttempts must be an integer >= 0, got ${String(rule.firstAttempts)}`,
    );
  }
  if (
    rule.fromAttempt !== undefined &&
    !(Number.isInteger(rule.fromAttempt) && rule.fromAttempt >= 1)
  ) {
    throw new RangeError(
      `${name}.fromAttempt must be an integer >= 1, got ${String(rule.fromAttempt)}`,
    );
  }
  if (
    rule.failAfterMessages !== undefined &&
    !(Number.isInteger(rule.failAfterMessages) && rule.failAfterMessages >= 0)
  ) {
    throw new RangeError(
      `${name}.failAfterMessages must be an integer >= 0, got ${String(rule.failAfterMessages)}`,
    );
  }
  if (rule.status !== undefined && Status[rule.status] === undefined) {
    throw new RangeError(`${name}.status must be a grpc status code, got ${String(rule.status)}`);
  }
  const l = rule.latency;
  if (l !== undefined) {
    const bad = (what: string, v: unknown) => {
      throw new RangeError(`${name}.latency.${what} must be a number >= 0, got ${String(v)}`);
    };
    const nonNeg = (what: string, v: unknown) => {
      if (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v)) bad(what, v);
    };
    if (l.kind === 'fixed') nonNeg('ms', l.ms);
    else if (l.kind === 'uniform') {
      nonNeg('minMs', l.minMs);
      nonNeg('maxMs', l.maxMs);
      if (l.maxMs < l.minMs) bad('maxMs (>= minMs)', l.maxMs);
    } else if (l.kind === 'tail') {
      nonNeg('extraMs', l.extraMs);
      if (l.baseMs !== undefined) nonNeg('baseMs', l.baseMs);
      if (!(l.percent >= 0 && l.percent <= 100)) {
        throw new RangeError(
          `${name}.latency.percent must be in [0, 100], got ${String(l.percent)}`,
        );
      }
    } else {
      throw new TypeError(`${name}.latency.kind must be 'fixed', 'uniform' or 'tail'`);
    }
  }
}

/** Validates a fault schedule, throwing a `TypeError`/`RangeError` that names the bad field. */
export function checkFaults(rules: readonly GrpcFaultRule[]): readonly GrpcFaultRule[] {
  if (!Array.isArray(rules)) throw new TypeError('faults must be an array of rules');
  rules.forEach(checkRule);
  return rules.slice();
}

function sampleLatency(spec: LatencySpec, random: RandomSource): number {
  switch (spec.kind) {
    case 'fixed':
      return spec.ms;
    case 'uniform':
      return spec.minMs + random() * (spec.maxMs - spec.minMs);
    case 'tail':
      return (spec.baseMs ?? 0) + (random() * 100 < spec.percent ? spec.extraMs : 0);
  }
}

function matches(rule: GrpcFaultRule, facts: AttemptFacts, random: RandomSource): boolean {
  if (rule.methods && !rule.methods.includes(facts.method) && !rule.methods.includes(facts.path)) {
    return false;
  }
  if (rule.firstAttempts !== undefined && facts.attempt > rule.firstAttempts) return false;
  if (rule.fromAttempt !== undefined && facts.attempt < rule.fromAttempt) return false;
  const rate = rule.rate ?? 1;
  return rate >= 1 || random() < rate;
}

/** Decides what the server does with one attempt under `rules`. Pure apart from `random`. */
export function planAttempt(
  rules: readonly GrpcFaultRule[],
  facts: AttemptFacts,
  random: RandomSource,
): AttemptPlan {
  const plan: AttemptPlan = {
    delayMs: 0,
    hang: false,
    dieAfterMessage: false,
    resetAfterRequest: false,
    fail: undefined,
    failAfterMessages: undefined,
  };
  let decided = false;
  for (const rule of rules) {
    if (!matches(rule, facts, random)) continue;
    if (rule.latency) plan.delayMs += sampleLatency(rule.latency, random);
    const hasOutcome =
      rule.hang === true ||
      rule.dieAfterMessage === true ||
      rule.resetAfterRequest === true ||
      rule.status !== undefined ||
      rule.failAfterMessages !== undefined ||
      rule.pushbackMs !== undefined;
    if (decided || !hasOutcome) continue;
    decided = true;
    if (rule.hang) {
      plan.hang = true;
      continue;
    }
    if (rule.dieAfterMessage) {
      plan.dieAfterMessage = true;
      continue;
    }
    if (rule.resetAfterRequest) {
      plan.resetAfterRequest = true;
      continue;
    }
    const code = rule.status ?? Status.UNAVAILABLE;
    plan.fail = {
      code,
      details: rule.details ?? `chaos: ${Status[code]}`,
      pushback: rule.pushbackMs === undefined ? undefined : String(rule.pushbackMs),
    };
    plan.failAfterMessages = rule.failAfterMessages;
  }
  return plan;
}
