import type { OperationResultEnvelope } from '@trpc/client';

/**
 * Whether an envelope proves the server answered: data, or a subscription's
 * `started`; connection-state envelopes do not.
 * @internal
 */
export function isAnswer(envelope: OperationResultEnvelope<unknown, unknown>): boolean {
  const type = (envelope.result as { type?: string }).type;
  return type !== 'state' && type !== 'stopped';
}
