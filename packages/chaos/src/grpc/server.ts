import {
  type Clock,
  type RandomSource,
  type Sleep,
  systemClock,
  systemSleep,
} from '@breakwater/core/time';
import {
  type handleBidiStreamingCall,
  type handleClientStreamingCall,
  type handleServerStreamingCall,
  type handleUnaryCall,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServiceDefinition,
  status as Status,
  type sendUnaryData,
} from '@grpc/grpc-js';
import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { type CapacitySpec, type CapacityStats, capacitySetting } from './capacity.js';
import {
  ECHO_METHODS,
  ECHO_SERVICE,
  type EchoRequest,
  type EchoResponse,
  loadEchoPackageDefinition,
} from './echo-proto.js';
import { type AttemptPlan, checkFaults, type GrpcFaultRule, planAttempt } from './faults.js';
import { type AttemptRecorder, createRecorder, type ObservedAttempt } from './recorder.js';
import { faultRandomness } from './seeded-random.js';

/** Request header that names a logical call across its retries. */
export const CALL_ID_HEADER = 'x-call-id';

/** Options of {@link startGrpcChaosServer}. */
export interface GrpcChaosServerOptions {
  /** Port to listen on; 0 picks a free one. Defaults to 0. */
  port?: number;
  /** Interface to bind. Defaults to `"127.0.0.1"`. */
  host?: string;
  /** Replica id put in every response and observation. Defaults to `"replica-1"`. */
  replica?: string;
  /** Initial fault schedule. Defaults to none (a healthy echo server). */
  faults?: readonly GrpcFaultRule[];
  /**
   * Seed of the fault schedule's random numbers (ignored with `random`). An attempt that
   * carries a call id draws from `(seed, call index, attempt)` alone, so every client meets
   * the same faults for the same call; attempts without one share one seeded sequence.
   * Defaults to 1.
   */
  seed?: number;
  /** Random source for rates and latency distributions, shared by every attempt. Defaults to draws from `seed`. */
  random?: RandomSource;
  /** Time source for observations. Defaults to `systemClock`. */
  clock?: Clock;
  /** How added latency is waited for. Defaults to `systemSleep`. */
  sleep?: Sleep;
  /** Most attempts kept in `observed` (counts continue beyond it). Defaults to 100 000. */
  maxObservations?: number;
  /**
   * A fixed capacity in front of every method: `workers` calls served at once,
   * `serviceMs` each, the rest queued FIFO (see {@link CapacitySpec}). Fault
   * rules apply after a call was served. Defaults to none (every call served at once).
   */
  capacity?: CapacitySpec;
}

/** A running fault-injecting Echo + `grpc.health.v1.Health` server. */
export interface GrpcChaosServer extends AttemptRecorder {
  /** The bound port (kept across `restart()`). */
  readonly port: number;
  /** `host:port`, ready for a grpc-js client. */
  readonly address: string;
  /** Replica id. */
  readonly replica: string;
  /** False between `stop()` and `restart()`. */
  readonly listening: boolean;
  /** Replaces the fault schedule (applies to attempts that arrive from now on). */
  setFaults(rules: readonly GrpcFaultRule[]): void;
  /**
   * Sets the capacity (`undefined`: unlimited from now on; calls already queued
   * are still served). Halving `workers` mid-run halves capacity at once: surplus
   * workers retire when their call is done.
   */
  setCapacity(spec: CapacitySpec | undefined): void;
  /** What the capacity did since the server started or `reset()`; all zero without one. */
  capacityStats(): CapacityStats;
  /** Sets the health status of `service` (default: the overall `""` and the Echo service). */
  setHealth(status: ServingStatus, service?: string): void;
  /** Stops listening and ends in-flight calls (connections are refused until `restart()`). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  /** Stops for good. */
  close(): Promise<void>;
  /** Same as `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** grpc-js's intercepting server call under a unary call object (not public API). */
interface InternalCall {
  sendMessage(message: unknown, done: () => void): void;
  nextCall?: InternalCall;
  stream?: { session?: { destroy(): void } };
}

/** The HTTP/2 session a server call runs on (the innermost intercepting call holds its stream). */
function sessionOf(call: InternalCall): { destroy(): void } | undefined {
  let c: InternalCall | undefined = call;
  while (c !== undefined && c.stream === undefined) c = c.nextCall;
  return c?.stream?.session;
}

/** The parts of a grpc-js server call the chaos server reads. */
type AnyServerCall = Pick<ServerUnaryCall<unknown, unknown>, 'getDeadline' | 'metadata'> & {
  once(event: 'cancelled', listener: () => void): unknown;
};

function deadlineOf(call: AnyServerCall): number | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? ms : undefined;
}

function firstString(md: Metadata, key: string): string | undefined {
  const v = md.get(key)[0];
  return v === undefined ? undefined : String(v);
}

function shortName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function trailersFor(plan: AttemptPlan): Metadata | undefined {
  if (plan.fail?.pushback === undefined) return undefined;
  const md = new Metadata();
  md.set('grpc-retry-pushback-ms', plan.fail.pushback);
  return md;
}

/** The plan of a call refused because the server's queue is full. */
const overCapacity: AttemptPlan = {
  delayMs: 0,
  hang: false,
  dieAfterMessage: false,
  resetAfterRequest: false,
  fail: {
    code: Status.RESOURCE_EXHAUSTED,
    details: 'chaos: over capacity',
    pushback: undefined,
  },
  failAfterMessages: undefined,
};

function failure(plan: AttemptPlan) {
  const fail = plan.fail as NonNullable<AttemptPlan['fail']>;
  const metadata = trailersFor(plan);
  return metadata === undefined
    ? { code: fail.code, details: fail.details }
    : { code: fail.code, details: fail.details, metadata };
}

/**
 * Starts a fault-injecting Echo server (with `grpc.health.v1.Health`) that
 * records what it saw: attempts per call id (`x-call-id`),
 * `grpc-previous-rpc-attempts`, deadlines, outcomes.
 * @example
 * const server = await startGrpcChaosServer({ faults: [{ status: status.UNAVAILABLE, firstAttempts: 2 }] });
 * try { ... } finally { await server.close(); }
 */
export async function startGrpcChaosServer(
  options: GrpcChaosServerOptions = {},
): Promise<GrpcChaosServer> {
  const host = options.host ?? '127.0.0.1';
  const replica = options.replica ?? 'replica-1';
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? systemSleep;
  const randomFor = faultRandomness(options.seed ?? 1, options.random);
  const recorder = createRecorder(clock, options.maxObservations ?? 100_000);
  let faults = checkFaults(options.faults ?? []);
  const capacity = capacitySetting(options.capacity, clock, sleep);
  const health = new HealthImplementation({ '': 'SERVING', [ECHO_SERVICE]: 'SERVING' });
  const definition = loadEchoPackageDefinition()[ECHO_SERVICE] as unknown as ServiceDefinition;

  /** Records the attempt, plans its faults and waits out latency or a hang; false if it was cancelled. */
  async function arrive(call: AnyServerCall, path: string) {
    const deadline = deadlineOf(call);
    const previous = firstString(call.metadata, 'grpc-previous-rpc-attempts');
    const record = recorder.begin({
      method: shortName(path),
      callId: firstString(call.metadata, CALL_ID_HEADER),
      previousAttempts: previous === undefined ? undefined : Number(previous),
      deadline,
      deadlineRemainingMs: deadline === undefined ? undefined : deadline - clock(),
      replica,
    });
    const plan = planAttempt(
      faults,
      { path, method: record.method, attempt: record.attempt },
      randomFor(record.callId, record.attempt),
    );
    let cancelled = false;
    const served = capacity.current;
    const controller =
      plan.delayMs > 0 || plan.hang || served !== undefined ? new AbortController() : undefined;
    // grpc-js also emits 'cancelled' when a finished call's stream closes; only an unanswered attempt was cancelled.
    call.once('cancelled', () => {
      if (record.outcome !== undefined) return;
      cancelled = true;
      record.outcome = 'CANCELLED';
      controller?.abort();
    });
    // A saturated server does not look at cancellation: a queued call is served even after
    // its client gave up (the wasted work the capacity counts), but is not answered.
    if (served !== undefined && controller !== undefined) {
      if ((await served.serve(controller.signal)) === 'refused') {
        return { record, plan: overCapacity, live: !cancelled };
      }
    }
    if (plan.delayMs > 0) await sleep(plan.delayMs, controller?.signal);
    if (plan.hang && !cancelled) {
      await new Promise<void>((resolve) => {
        controller?.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }
    return { record, plan, live: !cancelled };
  }

  function done(record: ObservedAttempt, code: Status): void {
    if (record.outcome === undefined) record.outcome = Status[code];
  }

  function reply(record: ObservedAttempt, message: string, index: number): EchoResponse {
    return { message, replica, attempt: record.attempt, index };
  }

  /** Answers a call with a single response: the planned failure or the echo. */
  function answer(
    record: ObservedAttempt,
    plan: AttemptPlan,
    callback: sendUnaryData<EchoResponse>,
    message: string,
    index: number,
  ): void {
    if (plan.fail) {
      done(record, plan.fail.code);
      callback(failure(plan));
      return;
    }
    done(record, Status.OK);
    callback(null, reply(record, message, index));
  }

  /** Sends the unary response without its status, then shuts the whole server down. */
  function dieAfterMessage(
    record: ObservedAttempt,
    call: ServerUnaryCall<EchoRequest, EchoResponse>,
  ): void {
    record.outcome = 'DIED_AFTER_MESSAGE';
    // The public unary API sends message and status together; the intercepting call under it
    // sends the message alone, which is the only way to be "between the answer and the status".
    const inner = (call as unknown as { call: InternalCall }).call;
    inner.sendMessage(reply(record, call.request.message ?? '', 0), () => {
      // Let the data frame reach the socket, then drop the connection the way a crash does:
      // the connection closes under the stream with no status (forceShutdown alone would cancel
      // the stream politely, and the client would see CANCELLED).
      void sleep(20).then(() => {
        sessionOf(inner)?.destroy();
        return stop();
      });
    });
  }

  /** Drops the connection under the call, which the server took but never answers. */
  function resetAfterRequest(
    record: ObservedAttempt,
    call: ServerUnaryCall<EchoRequest, EchoResponse>,
  ): void {
    record.outcome = 'RESET';
    sessionOf((call as unknown as { call: InternalCall }).call)?.destroy();
  }

  const unary =
    (path: string): handleUnaryCall<EchoRequest, EchoResponse> =>
    (call, callback) => {
      void arrive(call, path).then(({ record, plan, live }) => {
        if (!live) return;
        if (plan.dieAfterMessage) dieAfterMessage(record, call);
        else if (plan.resetAfterRequest) resetAfterRequest(record, call);
        else answer(record, plan, callback, call.request.message ?? '', 0);
      });
    };

  const serverStream: handleServerStreamingCall<EchoRequest, EchoResponse> = (call) => {
    void arrive(call, ECHO_METHODS.serverStream).then(({ record, plan, live }) => {
      if (!live) return;
      const count = call.request.count || 3;
      const failAt = plan.fail ? (plan.failAfterMessages ?? 0) : Number.POSITIVE_INFINITY;
      for (let i = 0; i < count && i < failAt; i++) {
        call.write(reply(record, call.request.message ?? '', i));
      }
      if (plan.fail) {
        done(record, plan.fail.code);
        call.emit('error', failure(plan));
        return;
      }
      done(record, Status.OK);
      call.end();
    });
  };

  const clientStream: handleClientStreamingCall<EchoRequest, EchoResponse> = (call, callback) => {
    const received: string[] = [];
    const arrived = arrive(call, ECHO_METHODS.clientStream);
    call.on('data', (m: EchoRequest) => received.push(m.message ?? ''));
    call.on('end', () => {
      void arrived.then(({ record, plan, live }) => {
        if (live) answer(record, plan, callback, received.join(','), received.length);
      });
    });
  };

  const bidi: handleBidiStreamingCall<EchoRequest, EchoResponse> = (call) => {
    let index = 0;
    let failed = false;
    const arrived = arrive(call, ECHO_METHODS.bidi);
    void arrived.then(({ record, plan, live }) => {
      if (live && plan.fail && plan.failAfterMessages === undefined) {
        failed = true;
        done(record, plan.fail.code);
        call.emit('error', failure(plan));
      }
    });
    call.on('data', (m: EchoRequest) => {
      void arrived.then(({ record, plan, live }) => {
        if (!live || failed) return;
        call.write(reply(record, m.message ?? '', index++));
        if (plan.fail && plan.failAfterMessages === index) {
          failed = true;
          done(record, plan.fail.code);
          call.emit('error', failure(plan));
        }
      });
    });
    call.on('end', () => {
      void arrived.then(({ record, live }) => {
        if (!live || failed) return;
        done(record, Status.OK);
        call.end();
      });
    });
  };

  const implementation = {
    Unary: unary(ECHO_METHODS.unary),
    UnaryUnsafe: unary(ECHO_METHODS.unaryUnsafe),
    ServerStream: serverStream,
    ClientStream: clientStream,
    Bidi: bidi,
  };

  let server: Server | undefined;
  let port = options.port ?? 0;

  async function listen(): Promise<void> {
    const s = new Server();
    s.addService(definition, implementation);
    health.addToServer(s);
    port = await new Promise<number>((resolve, reject) => {
      s.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
    server = s;
  }

  async function stop(): Promise<void> {
    const s = server;
    server = undefined;
    // forceShutdown ends in-flight calls at once, like a crashed replica.
    s?.forceShutdown();
  }

  await listen();

  const handle: GrpcChaosServer = {
    get port() {
      return port;
    },
    get address() {
      return `${host}:${port}`;
    },
    replica,
    get listening() {
      return server !== undefined;
    },
    get observed() {
      return recorder.observed;
    },
    attempts: recorder.attempts,
    total: recorder.total,
    reset() {
      recorder.reset();
      capacity.reset();
    },
    setFaults(rules) {
      faults = checkFaults(rules);
    },
    setCapacity: capacity.set,
    capacityStats: capacity.stats,
    setHealth(status, service) {
      if (service !== undefined) health.setStatus(service, status);
      else {
        health.setStatus('', status);
        health.setStatus(ECHO_SERVICE, status);
      }
    },
    stop,
    async restart() {
      if (server === undefined) await listen();
    },
    close: stop,
    [Symbol.asyncDispose]: stop,
  };
  return handle;
}
