import { GrpcStatus } from '@breakwater/core/grpc';
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';

describe('the shared gRPC layer', () => {
  it("has grpc-js's number for every status code name, and no other name", () => {
    const names = Object.keys(status).filter((key) => Number.isNaN(Number(key)));
    expect(Object.keys(GrpcStatus).sort()).toEqual(names.sort());
    for (const name of names) {
      expect(GrpcStatus[name as keyof typeof GrpcStatus]).toBe(status[name as keyof typeof status]);
    }
  });
});
