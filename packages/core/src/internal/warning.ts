/** A one-time notice from an adapter about a configuration that probably does not do what was meant. */
export interface ResilienceWarning {
  /**
   * `'no-idempotent-methods'`: retries or hedging are on, but no call they cover is known safe to repeat.
   * `'service-config-not-applied'`: `fromServiceConfig` met service-config fields Breakwater does not apply.
   */
  code: 'no-idempotent-methods' | 'service-config-not-applied';
  /** One sentence: what happens and how to change it. */
  message: string;
  /** The method or procedure that prompted it, when the warning is about one. */
  path?: string;
}

/** Codes already printed as a process warning: each is printed once per process. */
const printed = new Set<ResilienceWarning['code']>();

/**
 * Tells `listener` of `warning` (a throwing listener is ignored: a warning
 * never breaks construction or a call). Without a listener, prints it once
 * per process and code as a Node process warning where there is one (a
 * browser gets nothing): said once, not once per client or call.
 * @internal
 */
export function reportWarning(
  listener: ((warning: ResilienceWarning) => void) | undefined,
  warning: ResilienceWarning,
): void {
  if (listener !== undefined) {
    try {
      listener(warning);
    } catch {
      // A listener never breaks what it observes.
    }
    return;
  }
  if (printed.has(warning.code)) return;
  printed.add(warning.code);
  const host = (globalThis as { process?: { emitWarning?: (m: string, o: object) => void } })
    .process;
  host?.emitWarning?.(warning.message, {
    code: `BREAKWATER_${warning.code.toUpperCase().replaceAll('-', '_')}`,
  });
}
