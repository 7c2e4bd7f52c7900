import type { CallOptions, ClientMiddlewareCall } from 'nice-grpc-common';
import { unaryNext, unaryResult } from './next.js';

/**
 * One part of `resilienceMiddleware` run for a unary call as a plain async
 * step: it continues with `chain.next(call, options, index)` instead of a
 * nested middleware, so a stack of parts costs one generator for the call —
 * not one async generator, a copied call object and a `next` closure per
 * layer, as `composeClientMiddleware` would.
 * @internal
 */
export interface UnaryStage {
  unary<Response>(
    call: ClientMiddlewareCall<unknown, Response>,
    options: CallOptions,
    chain: UnaryChain,
    index: number,
  ): Promise<Response>;
}

/** Unary stages run in order, the first outermost; past the last, the call's own `next`. @internal */
export class UnaryChain {
  constructor(private readonly stages: readonly UnaryStage[]) {}

  /** True when no stage follows `index` (a stage that runs attempts takes `call.next` itself). */
  isLast(index: number): boolean {
    return index >= this.stages.length;
  }

  next<Response>(
    call: ClientMiddlewareCall<unknown, Response>,
    options: CallOptions,
    index: number,
  ): Promise<Response> {
    const stage = this.stages[index];
    if (stage === undefined) return unaryResult(unaryNext(call)(call.request, options));
    return stage.unary(call, options, this, index + 1);
  }
}

const CALL_NEXT = new UnaryChain([]);

/** Runs a unary call through `stage` alone (a middleware's unary path). @internal */
export function runAlone<Request, Response>(
  stage: UnaryStage,
  call: ClientMiddlewareCall<Request, Response>,
  options: CallOptions,
): Promise<Response> {
  return stage.unary(call as ClientMiddlewareCall<unknown, Response>, options, CALL_NEXT, 0);
}
