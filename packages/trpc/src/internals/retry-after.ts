import type { Clock } from '@breakwater/core';

function header(response: unknown, name: string): string | null | undefined {
  const headers = (response as { headers?: { get?: (n: string) => string | null } } | undefined)
    ?.headers;
  return typeof headers?.get === 'function' ? headers.get(name) : undefined;
}

/**
 * Milliseconds a `Retry-After` header (delta-seconds or HTTP-date) asks to
 * wait, or `undefined` when absent or malformed (a negative or non-numeric
 * value means "no pushback").
 * @internal
 */
export function retryAfterMsFrom(response: unknown, clock: Clock): number | undefined {
  const value = header(response, 'retry-after');
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || /^-/.test(trimmed)) return undefined;
  return Math.max(0, at - clock());
}
