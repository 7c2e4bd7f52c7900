import { describe, expect, it } from 'vitest';
import { parseArgs, SETTING_FLAGS } from './args.js';

const suites = ['micro', 'otel-cost', 'outage-recovery', 'soak', 'redis-fleet', 'partial'];
const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseArgs(argv, { suites, env });

describe('parseArgs', () => {
  it('runs every suite by default, and the ones --only names (both spellings)', () => {
    expect(parse([])).toEqual({
      only: undefined,
      quick: false,
      list: false,
      render: false,
      child: undefined,
      settings: {},
    });
    expect(parse(['--', '--only', 'micro,otel-cost']).only).toEqual(['micro', 'otel-cost']);
    expect(parse(['--only=redis-fleet', '--quick'])).toMatchObject({
      only: ['redis-fleet'],
      quick: true,
    });
    // --render rewrites BENCHMARKS.md from summary.json and runs nothing.
    expect(parse(['--render']).render).toBe(true);
    expect(parse([], { BENCH_ONLY: 'soak', BENCH_QUICK: '1' })).toMatchObject({
      only: ['soak'],
      quick: true,
    });
  });

  it('turns suite settings into environment variables; a switch is 1', () => {
    const args = parse([
      '--only',
      'otel-cost,redis-fleet',
      '--otel-rounds',
      '41',
      '--otel-calls=10000',
      '--own-only',
      '--keyed',
    ]);
    expect(args.settings).toEqual({
      BENCH_OTEL_ROUNDS: '41',
      BENCH_OTEL_CALLS: '10000',
      BENCH_OTEL_OWN_ONLY: '1',
      BENCH_REDIS_KEYED: '1',
    });
    // A plain run includes every suite, so every setting has a reader.
    expect(parse(['--keyed', '--duration', '20']).settings).toEqual({
      BENCH_REDIS_KEYED: '1',
      BENCH_SOAK_SECONDS: '20',
    });
  });

  it('refuses a flag it does not know, naming it and the known ones', () => {
    expect(() => parse(['--only', 'redis-fleet', '--keyd'])).toThrow(
      /unknown flag --keyd; the runner knows --only, --quick, --list, .*--keyed/,
    );
    // The standalone scripts' environment-style names are not flags either.
    expect(() => parse(['--rounds', '5'])).toThrow(/unknown flag --rounds/);
    // The A/B runs against an older core or otel copy are gone (git history has them).
    expect(() => parse(['--base-core', '/tmp/core/index.ts'])).toThrow(/unknown flag --base-core/);
    expect(() => parse(['--base-otel', '/tmp/otel/index.ts'])).toThrow(/unknown flag --base-otel/);
  });

  it('refuses a stray argument, a missing value, a value on a switch and an unknown suite', () => {
    expect(() => parse(['micro'])).toThrow(/unexpected argument "micro"/);
    expect(() => parse(['--otel-rounds'])).toThrow('--otel-rounds needs a value');
    expect(() => parse(['--otel-rounds', '--quick'])).toThrow('--otel-rounds needs a value');
    expect(() => parse(['--only='])).toThrow('--only needs a value');
    expect(() => parse(['--keyed=yes'])).toThrow('--keyed takes no value, got --keyed=yes');
    expect(() => parse(['--only', 'redis'])).toThrow(
      'unknown suite redis; known: micro, otel-cost, outage-recovery, soak, redis-fleet',
    );
  });

  it('refuses a setting that none of the selected suites reads', () => {
    expect(() => parse(['--only', 'micro', '--keyed'])).toThrow(
      '--keyed is read by redis-fleet only, which this run does not include (--only micro)',
    );
    expect(() => parse(['--only', 'redis-fleet', '--own-only'])).toThrow(
      /--own-only is read by otel-cost only/,
    );
    expect(() => parse(['--only', 'soak', '--rate', '100'])).toThrow(
      /--rate is read by outage-recovery only/,
    );
  });

  it('every setting names a suite that exists and an environment variable of its own', () => {
    const envs = SETTING_FLAGS.map((f) => f.env);
    expect(new Set(envs).size).toBe(envs.length);
    for (const f of SETTING_FLAGS) {
      expect(f.flag).toMatch(/^--[a-z-]+$/);
      expect(f.env).toMatch(/^BENCH_[A-Z_]+$/);
      for (const s of f.suites) expect(suites).toContain(s);
    }
  });

  it('the runner calling itself: one suite, its output file, quick', () => {
    expect(parse(['--child', 'otel-cost', '/tmp/out.json', '--quick'])).toEqual({
      only: ['otel-cost'],
      quick: true,
      list: false,
      render: false,
      child: { suite: 'otel-cost', out: '/tmp/out.json' },
      settings: {},
    });
  });
});
