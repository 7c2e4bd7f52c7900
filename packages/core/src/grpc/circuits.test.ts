import { describe, expect, it } from 'vitest';
import { createCircuitBreaker } from '../breaker/circuit-breaker.js';
import { isCircuitOpenError } from '../errors/circuit-open-error.js';
import { COUNT_ONLY_CIRCUIT } from '../test-helpers/circuit.js';
import { createManualClock } from '../time/manual-clock.js';
import { circuitScopeKey, createGrpcCircuits } from './circuits.js';
import { GrpcStatus } from './status.js';

const A = '/shop.Cart/Add';
const B = '/shop.Cart/Get';
const C = '/shop.Stock/Get';

describe('circuitScopeKey', () => {
  it('keys a path by itself, its service, or the whole client', () => {
    expect(circuitScopeKey('method', A)).toBe(A);
    expect(circuitScopeKey('service', A)).toBe('shop.Cart');
    expect(circuitScopeKey('client', A)).toBe('client');
  });
});

describe('createGrpcCircuits', () => {
  it('shares one breaker per scope key and names it by the key', () => {
    const made: string[] = [];
    const circuits = createGrpcCircuits({
      scope: 'service',
      breakerFor: (key) => {
        made.push(key);
        return createCircuitBreaker({ ...COUNT_ONLY_CIRCUIT, name: key });
      },
    });
    expect(circuits.circuitFor(A)).toBe(circuits.circuitFor(B));
    expect(circuits.circuitFor(A)).not.toBe(circuits.circuitFor(C));
    expect(circuits.methodCircuit(B)).toMatchObject({ path: B, key: 'shop.Cart' });
    expect(made).toEqual(['shop.Cart', 'shop.Stock']);
  });

  it('builds breakers from `breaker` on the given clock; a tripped one refuses with its key and wait', () => {
    const clock = createManualClock(0);
    const circuits = createGrpcCircuits({
      clock,
      breaker: { ...COUNT_ONLY_CIRCUIT, failureThreshold: 1, openDurationMs: 500 },
    });
    const circuit = circuits.methodCircuit(A);
    circuit.breaker.release(circuit.breaker.tryAcquire(), { outcome: 'failure', durationMs: 1 });
    expect(circuit.breaker.tryAcquire()).toBeLessThan(0);
    clock.advance(200);
    const error = circuits.openError(circuit);
    expect(isCircuitOpenError(error)).toBe(true);
    expect(error).toMatchObject({ circuit: A, retryAfterMs: 300 });
    expect(circuits.clock).toBe(clock);
  });

  it('counts OK as success, server trouble as failure, caller errors and caller cancellation as neutral', () => {
    const circuits = createGrpcCircuits();
    const outcome = (code: number, cancelled = false) =>
      circuits.outcomeOf(A, code, '', undefined, cancelled);
    expect(outcome(GrpcStatus.OK)).toBe('success');
    expect(outcome(GrpcStatus.UNAVAILABLE)).toBe('failure');
    expect(outcome(GrpcStatus.DEADLINE_EXCEEDED)).toBe('failure');
    expect(outcome(GrpcStatus.INVALID_ARGUMENT)).toBe('neutral');
    expect(outcome(GrpcStatus.RESOURCE_EXHAUSTED)).toBe('neutral');
    expect(outcome(GrpcStatus.UNAVAILABLE, true)).toBe('neutral');
  });

  it('asks the given classifier how a status counts', () => {
    const circuits = createGrpcCircuits({
      classify: (input) => ({
        retry: false,
        failover: false,
        countForCircuit: input.details === 'count me',
      }),
    });
    expect(circuits.outcomeOf(A, GrpcStatus.NOT_FOUND, 'count me', undefined, false)).toBe(
      'failure',
    );
    expect(circuits.outcomeOf(A, GrpcStatus.UNAVAILABLE, '', undefined, false)).toBe('neutral');
  });

  it('a half-open probe that found no connection is neutral: the request never left', () => {
    const circuits = createGrpcCircuits();
    const local = 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1';
    const U = GrpcStatus.UNAVAILABLE;
    expect(circuits.outcomeOf(A, U, local, undefined, false, true)).toBe('neutral');
    expect(circuits.outcomeOf(A, U, 'Stream refused by server', undefined, false, true)).toBe(
      'neutral',
    );
    // Not a probe: an unreachable server still counts, so the circuit opens.
    expect(circuits.outcomeOf(A, U, local, undefined, false, false)).toBe('failure');
    // A server that answered UNAVAILABLE was reached: its probe re-opens the circuit.
    expect(circuits.outcomeOf(A, U, 'overloaded', undefined, false, true)).toBe('failure');
    // So was one that forwarded grpc-js's words (its status carries the server's content-type).
    const served = (key: string) => (key === 'content-type' ? 'application/grpc' : undefined);
    expect(circuits.outcomeOf(A, U, local, served, false, true)).toBe('failure');
  });

  it('rejects an unknown scope, naming the option and the value', () => {
    expect(() => createGrpcCircuits({ scope: 'host' as never })).toThrow(
      new TypeError(`scope must be one of 'method', 'service', 'client', got host`),
    );
  });
});
