import type { Interceptor, InterceptorOptions, NextCall } from '@grpc/grpc-js';
import { asInterceptingCall } from './refused-call.js';
import type { CallLink } from './types.js';

/**
 * One link of an interceptor stack that continues the call through
 * `chain.next(options, index, final)` instead of a `nextCall` closure, so a
 * stack of stages costs no closure per layer per call (grpc-js builds one per
 * interceptor; `final` is grpc-js's own `nextCall`, already made per call).
 * @internal
 */
export interface Stage {
  intercept(
    options: InterceptorOptions,
    chain: StageChain,
    index: number,
    final: NextCall,
  ): CallLink;
}

/** Stages run in order, the first outermost. @internal */
export class StageChain {
  constructor(private readonly stages: readonly Stage[]) {}

  /** Continues a call at stage `index` (past the last one: grpc-js's `final`). */
  next(options: InterceptorOptions, index: number, final: NextCall): CallLink {
    const stage = this.stages[index];
    return stage === undefined ? final(options) : stage.intercept(options, this, index + 1, final);
  }
}

/** One grpc-js interceptor running `stages`, outermost first. @internal */
export function stageInterceptor(stages: readonly Stage[]): Interceptor {
  const chain = new StageChain(stages);
  return (options, nextCall) => asInterceptingCall(chain.next(options, 0, nextCall));
}
