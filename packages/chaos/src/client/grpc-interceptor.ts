import {
  type InterceptingListener,
  type Interceptor,
  Metadata,
  status as Status,
  type StatusObject,
} from '@grpc/grpc-js';
import { type ChaosPlan, type ClientChaosOptions, createChaosPlanner } from './plan.js';

/** Options of {@link chaosInterceptor}. */
export interface ChaosInterceptorOptions extends ClientChaosOptions {
  /** Status of an injected failure. Defaults to `UNAVAILABLE`. */
  status?: Status;
  /** Details of an injected failure. Defaults to `"chaos: injected <CODE>"`. */
  details?: string;
}

/** The call methods grpc-js uses on what an interceptor returns. */
interface CallLink {
  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void;
  sendMessageWithContext(context: object, message: unknown): void;
  sendMessage(message: unknown): void;
  startRead(): void;
  halfClose(): void;
  cancelWithStatus(code: Status, details: string): void;
  getPeer(): string;
  getAuthContext(): unknown;
}

/**
 * A call delayed and/or failed by chaos. It opens the real call (through
 * `open`) only after the delay and only if it is not failed, replaying what
 * the caller did meanwhile; a failed call never reaches the network.
 */
class ChaosCall implements CallLink {
  private inner: CallLink | undefined;
  private listener: Partial<InterceptingListener> | undefined;
  private ops: Array<(call: CallLink) => void> = [];
  private ended = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly open: () => CallLink,
    private readonly plan: ChaosPlan,
    private readonly failure: StatusObject,
    private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  ) {}

  start(metadata: Metadata, listener?: Partial<InterceptingListener>): void {
    this.listener = listener;
    // Even with no delay, proceed after grpc-js has called sendMessage/halfClose.
    const wait =
      this.plan.delayMs > 0 ? this.sleep(this.plan.delayMs, this.abort.signal) : Promise.resolve();
    void wait.then(() => this.proceed(metadata));
  }
  private proceed(metadata: Metadata): void {
    if (this.ended) return;
    if (this.plan.fail) {
      this.finish(this.failure);
      return;
    }
    const inner = this.open();
    this.inner = inner;
    inner.start(metadata, this.listener);
    for (const op of this.ops) op(inner);
    this.ops = [];
  }
  private finish(status: StatusObject): void {
    this.ended = true;
    this.ops = [];
    this.listener?.onReceiveStatus?.(status);
  }
  private run(op: (call: CallLink) => void): void {
    if (this.inner !== undefined) op(this.inner);
    else if (!this.ended) this.ops.push(op);
  }
  sendMessageWithContext(context: object, message: unknown): void {
    this.run((c) => c.sendMessageWithContext(context, message));
  }
  sendMessage(message: unknown): void {
    this.run((c) => c.sendMessage(message));
  }
  startRead(): void {
    this.run((c) => c.startRead());
  }
  halfClose(): void {
    this.run((c) => c.halfClose());
  }
  cancelWithStatus(code: Status, details: string): void {
    if (this.inner !== undefined) {
      this.inner.cancelWithStatus(code, details);
      return;
    }
    if (this.ended) return;
    this.abort.abort();
    const status = { code, details, metadata: new Metadata() };
    process.nextTick(() => this.finish(status));
  }
  getPeer(): string {
    return this.inner?.getPeer() ?? 'unknown';
  }
  getAuthContext(): unknown {
    return this.inner?.getAuthContext() ?? null;
  }
}

/**
 * A grpc-js client interceptor that injects faults into the caller's own
 * chain: a share of calls fails with `status` without reaching the network,
 * and a share waits `latency` first. Place it innermost (last) to test how the
 * interceptors above it cope, or outermost to fail calls before them.
 * @example
 * new EchoClient(address, credentials.createInsecure(), {
 *   interceptors: [resilienceInterceptor({ idempotent }), chaosInterceptor({ errorRate: 0.3, seed: 7 })],
 * });
 */
export function chaosInterceptor(options: ChaosInterceptorOptions = {}): Interceptor {
  const planner = createChaosPlanner(options);
  const code = options.status ?? Status.UNAVAILABLE;
  if (Status[code] === undefined) {
    throw new RangeError(`status must be a grpc status code, got ${String(options.status)}`);
  }
  const details = options.details ?? `chaos: injected ${Status[code]}`;
  return (callOptions, nextCall) => {
    const plan = planner.plan(callOptions.method_definition.path);
    if (plan === undefined) return nextCall(callOptions) as ReturnType<Interceptor>;
    const failure = { code, details, metadata: new Metadata() };
    const call = new ChaosCall(
      () => nextCall(callOptions) as unknown as CallLink,
      plan,
      failure,
      planner.sleep,
    );
    // grpc-js only uses the CallLink methods of what an interceptor returns.
    return call as unknown as ReturnType<Interceptor>;
  };
}
