/** Kafka failures as the bus reports them. */
import { VaultstreamError } from '../core/errors.ts';

/**
 * kafkajs errors that say it gave up, not that the request cannot succeed: its own retries spent
 * (a broker down or restarting), no group coordinator found yet, a wait timed out. kafkajs marks
 * them non-retriable, yet the next attempt after the outage succeeds.
 */
const GAVE_UP = new Set([
  'KafkaJSNumberOfRetriesExceeded',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSTimeout',
  'KafkaJSLockTimeout',
]);

/**
 * True for a failure no retry can cure: a kafkajs error marked non-retriable (an error response
 * the broker marks permanent such as an authorization failure, an unsupported API, a bad
 * argument) that is not one of the give-ups above, nor a wrapper of a retriable error (the
 * producer reports a refused connection as a KafkaJSNonRetriableError caused by a
 * KafkaJSConnectionError once its retries are spent).
 */
export function isPermanentKafkaError(err: unknown): boolean {
  const e = err as { name?: string; retriable?: boolean; cause?: unknown } | null;
  if (e?.retriable !== false || GAVE_UP.has(e.name ?? '')) return false;
  return e.cause === undefined || e.cause === null ? true : isPermanentKafkaError(e.cause);
}

/** A kafkajs failure as a BUS_UNAVAILABLE error, retryable unless it is permanent. */
export function busError(what: string, err: unknown): VaultstreamError {
  const msg = err instanceof Error ? err.message : String(err);
  return new VaultstreamError('BUS_UNAVAILABLE', `kafka ${what} failed: ${msg}`, {
    cause: err,
    retryable: !isPermanentKafkaError(err),
  });
}
