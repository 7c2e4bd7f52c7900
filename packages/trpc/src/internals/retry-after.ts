import type { Clock } from '@breakwater/core';

function header(response: unknown, name: string): string | null | undefined {
  const headers = (response as { headers?: { get?: (n: string) => string | null } } | undefined)
    ?.headers;
  return typeof headers?.get === 'function' ? headers.get(name) : undefined;
}

/**
 * Milliseconds a `Retry-After` header (delta-seconds or HTTP-date) asks to
 * wait; `undefined` when absent; `NaN` when present but negative or not a
 * number or date — a pushback the engine reads as "do not retry".
 * @internal
 */
export function retryAfterMsFrom(response: unknown, clock: Clock): number | undefined {
  const value = header(response, 'retry-after');
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || /^[-+\d]/.test(trimmed)) return Number.NaN;
  return Math.max(0, at - clock());
}
