/**
 * What the Kafka subscription (bus/kafka-subscription.ts) does about kafkajs crashes: the error to
 * hand kafkajs so it rejoins instead of crashing, and running a consumer again that kafkajs left
 * stopped.
 */
import { type BackoffOptions, backoffDelay } from '../core/retry.ts';

/** The innermost error of a kafkajs wrapper chain that carries a protocol error `type`, else `err`. */
export function protocolCause(err: unknown): unknown {
  for (let e = err as { type?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (typeof e.type === 'string') return e;
  }
  return err;
}

/**
 * kafkajs restarts a crashed consumer only when the cause is retriable; after any other crash
 * (e.g. a commit answered UNKNOWN_MEMBER_ID once a restarted broker forgot the member) it stays
 * stopped, and the subscription would consume nothing while looking alive. Nothing a crash can
 * leave behind is worth that: `run` (connect and run: a new member, from the committed offsets)
 * is called after a growing pause until it succeeds or `stopped()` is true.
 */
export async function runAgainAfterCrash(
  error: unknown,
  o: {
    run: () => Promise<void>;
    stopped: () => boolean;
    pause: BackoffOptions;
    log: (err: unknown, pauseMs: number) => void;
  },
): Promise<void> {
  for (let n = 0; !o.stopped(); n++) {
    const pauseMs = backoffDelay(n, o.pause);
    o.log(error, pauseMs);
    // Unref'd: a pause in progress never keeps a stopping process up.
    await new Promise<void>((resolve) => setTimeout(resolve, pauseMs).unref());
    if (o.stopped()) return;
    try {
      await o.run();
      return;
    } catch (err) {
      error = err;
    }
  }
}
