import { describe, expect, it } from 'vitest';
import {
  allocationsWhile,
  attributeAllocations,
  attributeProfile,
  type CpuProfile,
  type HeapProfileNode,
  ownerOf,
  profileWhile,
} from './profile.js';

const frame = (functionName: string, url: string, lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

describe('ownerOf', () => {
  it('names the owner of a frame from its URL or pseudo-frame', () => {
    expect(ownerOf(frame('(idle)', ''))).toBe('idle');
    expect(ownerOf(frame('(garbage collector)', ''))).toBe('gc');
    expect(ownerOf(frame('(program)', ''))).toBe('program');
    expect(ownerOf(frame('runMicrotasks', ''))).toBe('native');
    expect(ownerOf(frame('emit', 'node:events'))).toBe('node');
    expect(
      ownerOf(frame('withTimeout', 'file:///r/packages/core/src/deadline/with-timeout.ts')),
    ).toBe('breakwater');
    expect(
      ownerOf(
        frame(
          'start',
          'file:///r/node_modules/.pnpm/@grpc+grpc-js@1.14.7/node_modules/@grpc/grpc-js/build/src/call.js',
        ),
      ),
    ).toBe('grpc-js');
    expect(
      ownerOf(
        frame(
          'execute',
          'file:///r/node_modules/.pnpm/abort-controller-x@0.4.3/node_modules/abort-controller-x/lib/execute.js',
        ),
      ),
    ).toBe('nice-grpc');
    expect(
      ownerOf(
        frame('unaryMethod', 'file:///r/node_modules/nice-grpc/lib/client/createUnaryMethod.js'),
      ),
    ).toBe('nice-grpc');
    expect(
      ownerOf(frame('httpBatchLink', 'file:///r/node_modules/@trpc/client/dist/index.mjs')),
    ).toBe('trpc');
    expect(ownerOf(frame('niceCall', 'file:///r/bench/suites/clients.ts'))).toBe('bench');
    expect(ownerOf(frame('decode', 'file:///r/node_modules/protobufjs/src/reader.js'))).toBe(
      'other',
    );
  });
});

describe('attributeProfile', () => {
  it('sums self time per call by owner and ranks Breakwater functions', () => {
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(idle)', '') },
        {
          id: 2,
          callFrame: frame('withTimeout', 'file:///r/packages/core/src/deadline/with-timeout.ts'),
        },
        {
          id: 3,
          callFrame: frame('unary', 'file:///r/packages/nice-grpc/src/bulkhead-middleware.ts'),
        },
        { id: 4, callFrame: frame('(garbage collector)', '') },
        // Same function at another call site: one entry.
        {
          id: 5,
          callFrame: frame('withTimeout', 'file:///r/packages/core/src/deadline/with-timeout.ts'),
        },
      ],
      samples: [1, 2, 3, 2, 4, 5, 1],
      timeDeltas: [100, 10, 30, 10, 40, 20, 900],
    };
    const a = attributeProfile(profile, 10, 5);
    expect(a.calls).toBe(10);
    expect(a.usPerCall.idle).toBeCloseTo(100);
    expect(a.usPerCall.breakwater).toBeCloseTo(7);
    expect(a.usPerCall.gc).toBeCloseTo(4);
    expect(a.usPerCall.node).toBeUndefined();
    expect(a.busyUsPerCall).toBeCloseTo(11);
    expect(a.breakwater).toEqual([
      { name: 'withTimeout (core/deadline/with-timeout.ts)', usPerCall: 4 },
      { name: 'unary (nice-grpc/bulkhead-middleware.ts)', usPerCall: 3 },
    ]);
    expect(attributeProfile(profile, 10, 1).breakwater).toHaveLength(1);
  });

  it('counts a window without calls as one call', () => {
    const profile: CpuProfile = {
      nodes: [{ id: 1, callFrame: frame('(program)', '') }],
      samples: [1],
      timeDeltas: [50],
    };
    expect(attributeProfile(profile, 0).usPerCall.program).toBe(50);
  });
});

describe('profileWhile', () => {
  it('profiles the work it runs and returns its result', async () => {
    const spin = () => {
      let x = 0;
      for (let i = 0; i < 2e6; i++) x += Math.sqrt(i);
      return x;
    };
    const { result, profile } = await profileWhile(async () => spin(), 100);
    expect(result).toBeGreaterThan(0);
    expect(profile.samples.length).toBeGreaterThan(0);
    expect(profile.samples.length).toBe(profile.timeDeltas.length);
    expect(profile.nodes.some((n) => n.callFrame.functionName === 'spin')).toBe(true);
  });

  it('stops the profiler when the work throws, so the next profile can start', async () => {
    await expect(profileWhile(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const { result } = await profileWhile(async () => 1);
    expect(result).toBe(1);
  });
});

describe('attributeAllocations', () => {
  it('sums self bytes per call by owner and ranks Breakwater functions', () => {
    const node = (
      functionName: string,
      url: string,
      selfSize: number,
      children: HeapProfileNode[] = [],
    ): HeapProfileNode => ({ callFrame: { functionName, url }, selfSize, children });
    const head = node('(root)', '', 0, [
      node('withTimeout', 'file:///r/packages/core/src/deadline/with-timeout.ts', 400, [
        node('unary', 'file:///r/packages/nice-grpc/src/internals/guard-stage.ts', 1000),
      ]),
      node('emit', 'node:events', 600, [
        node('withTimeout', 'file:///r/packages/core/src/deadline/with-timeout.ts', 200),
      ]),
    ]);
    const a = attributeAllocations(head, 4, 1);
    expect(a.bytesPerCall).toBe(550);
    expect(a.byOwner).toEqual({ breakwater: 400, node: 150 });
    expect(a.breakwater).toEqual([
      { name: 'unary (nice-grpc/internals/guard-stage.ts)', bytesPerCall: 250 },
    ]);
  });

  it('samples a real allocation, objects already collected included', async () => {
    const { head } = await allocationsWhile(async () => {
      // Each array escapes into `recent`, which is cleared often: all of them become garbage.
      const recent: number[][] = [];
      for (let i = 0; i < 20_000; i++) {
        recent.push(new Array(16).fill(i));
        if (recent.length === 100) recent.length = 0;
      }
      return recent.length;
    });
    // 20 000 arrays of 16 slots are over 2.5 MB, all garbage by the end.
    expect(attributeAllocations(head, 1).bytesPerCall).toBeGreaterThan(1_000_000);
  });
});
