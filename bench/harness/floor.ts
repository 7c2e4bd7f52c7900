/**
 * Hand-written lower bounds for the protect table: not a library, the least
 * any wrapper of the same contract can do on this runtime, timed in the same
 * interleaved rounds as `protect` so a target below them shows as such.
 */

type Op<T> = (ctx: { attempt: number }) => Promise<T>;

/**
 * The least a wrapper that watches the operation's outcome can do: one
 * `then` on the operation's promise (its derived promise is the caller's).
 * Such a wrapper cannot settle the caller before the operation does.
 */
export function floorThen<T>(fn: Op<T>): Promise<T> {
  return fn({ attempt: 1 }).then(identity);
}

function identity<T>(value: T): T {
  return value;
}

let capturedResolve: (value: unknown) => void = identity;
let capturedReject: (error: unknown) => void = identity;
function capture(resolve: (value: never) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve as (value: unknown) => void;
  capturedReject = reject;
}

/** A reused per-call record: its two settlement handlers are made once, as protect's are. */
class FloorCall {
  resolve: (value: unknown) => void = identity;
  reject: (error: unknown) => void = identity;
  startedAt = 0;
  readonly onValue = (value: unknown): void => {
    const resolve = this.resolve;
    spare.push(this);
    resolve(value);
  };
  readonly onError = (error: unknown): void => {
    const reject = this.reject;
    spare.push(this);
    reject(error);
  };
}
const spare: FloorCall[] = [];

/**
 * The least a wrapper with a deadline can do, in bytes: a caller's promise with
 * settlers of its own (a deadline must settle it while the operation still
 * runs), a context object for the attempt, one `then` on the operation's
 * promise and one clock read for the deadline's start. No timer is armed, no
 * circuit or slot is counted: every one of those would only add. The record
 * is reused (no per-call closures), as protect's call object is; a reused
 * record lives in the old generation, so storing the new settlers in it costs
 * write barriers: {@link floorDeadlineFresh} is the faster shape.
 */
export function floorDeadlineReused<T>(fn: Op<T>): Promise<T> {
  const call = spare.pop() ?? new FloorCall();
  const promise = new Promise<T>(capture);
  call.resolve = capturedResolve;
  call.reject = capturedReject;
  call.startedAt = performance.now();
  fn({ attempt: 1 }).then(call.onValue, call.onError);
  return promise;
}

/**
 * The same contract as {@link floorDeadlineReused}, the faster way: a fresh
 * record and closures per call (young objects, no write barriers), more bytes.
 */
export function floorDeadlineFresh<T>(fn: Op<T>): Promise<T> {
  let record: { resolve: (value: T) => void; reject: (error: unknown) => void; startedAt: number };
  const promise = new Promise<T>((resolve, reject) => {
    record = { resolve, reject, startedAt: performance.now() };
  });
  fn({ attempt: 1 }).then(
    (value) => record.resolve(value),
    (error: unknown) => record.reject(error),
  );
  return promise;
}
