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
