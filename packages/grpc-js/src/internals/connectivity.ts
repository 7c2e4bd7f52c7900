import { type ChannelInterface, connectivityState as State } from '@grpc/grpc-js';

// Best first: the routing channel is as connected as its best target.
const ORDER: readonly State[] = [
  State.READY,
  State.CONNECTING,
  State.IDLE,
  State.TRANSIENT_FAILURE,
  State.SHUTDOWN,
];

/**
 * The combined state of several channels: the best state any of them is in.
 * @internal
 */
export function combinedState(channels: readonly ChannelInterface[], tryToConnect: boolean): State {
  let best = ORDER.length - 1;
  for (const channel of channels) {
    const rank = ORDER.indexOf(channel.getConnectivityState(tryToConnect));
    if (rank >= 0 && rank < best) best = rank;
  }
  return ORDER[best] as State;
}

/**
 * Calls `callback` once, when the combined state leaves `current` (no error)
 * or when `deadline` passes first (with an error), like grpc-js's own
 * `watchConnectivityState`.
 * @internal
 */
export function watchCombinedState(
  channels: readonly ChannelInterface[],
  current: State,
  deadline: Date | number,
  callback: (error?: Error) => void,
): void {
  if (combinedState(channels, false) !== current) {
    process.nextTick(callback);
    return;
  }
  let done = false;
  const watch = (channel: ChannelInterface) => {
    channel.watchConnectivityState(channel.getConnectivityState(false), deadline, (error) => {
      if (done) return;
      if (error !== undefined) {
        done = true;
        callback(error);
      } else if (combinedState(channels, false) !== current) {
        done = true;
        callback();
      } else {
        watch(channel);
      }
    });
  };
  for (const channel of channels) watch(channel);
}

/**
 * Tells `reachable(true)` each time `channel` enters READY from another state
 * (a connection back after a failure) and `reachable(false)` each time it
 * enters TRANSIENT_FAILURE (its connection attempts fail), until it shuts
 * down or `stopped()` says so. With `reconnect`, a channel that falls back to
 * IDLE (its server closed the connection, or a failed connect's backoff ran
 * out) connects again at once, so a server that comes back is seen without
 * waiting for a call that its open circuit would not send. No timer: with an
 * `Infinity` deadline grpc-js only keeps the watcher in a list, so it never
 * holds the process open.
 * @internal
 */
export function watchReachable(
  channel: ChannelInterface,
  reachable: (ready: boolean) => void,
  stopped: () => boolean,
  reconnect: boolean,
): void {
  const watch = (from: State) => {
    if (stopped() || from === State.SHUTDOWN) return;
    try {
      channel.watchConnectivityState(from, Number.POSITIVE_INFINITY, () => {
        let now = channel.getConnectivityState(false);
        if (now !== from && !stopped()) {
          if (now === State.READY) reachable(true);
          else if (now === State.TRANSIENT_FAILURE) reachable(false);
        }
        if (now === State.IDLE && reconnect && !stopped()) now = channel.getConnectivityState(true);
        watch(now);
      });
    } catch {
      // The channel shut down meanwhile: nothing left to watch.
    }
  };
  watch(channel.getConnectivityState(false));
}
