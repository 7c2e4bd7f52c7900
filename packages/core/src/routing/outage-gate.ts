/**
 * The router's probe cadence while every provider is ejected (a full
 * outage): at most one recovery probe per probe interval across all the
 * providers, rotating between them. Routers over the same circuits (an
 * adapter's twin routers for calls that may and may not be repeated) share
 * one gate, so the upstream sees one cadence whatever router a call took.
 * @internal
 */
export class OutageGate {
  /** Clock time before which no outage probe goes out. */
  nextAt = Number.NEGATIVE_INFINITY;
  /** Clock time the last outage probe went out. */
  lastProbeAt = Number.NEGATIVE_INFINITY;
  /** Set while a router half-opens a circuit itself (a panic or outage probe): that is no health signal. */
  forcing = false;
  /** Registration index of a provider a health signal half-opened (its probe goes at once), or -1. */
  signalled = -1;
  /** Registration index of the provider the next outage probe tries first. */
  cursor = 0;
}

const gates = new WeakMap<object, OutageGate>();

/**
 * The gate of the routers whose first provider's circuit is `circuit` (a
 * circuit belongs to one provider, so routers sharing it route to the same
 * upstream); a gate of its own without a circuit.
 * @internal
 */
export function outageGateFor(circuit: object | undefined): OutageGate {
  if (circuit === undefined) return new OutageGate();
  let gate = gates.get(circuit);
  if (gate === undefined) {
    gate = new OutageGate();
    gates.set(circuit, gate);
  }
  return gate;
}
