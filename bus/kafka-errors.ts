/** Kafka failures as the bus reports them. */
import { VaultstreamError } from '../core/errors.ts';

/** A kafkajs failure as a BUS_UNAVAILABLE error, retryable unless kafkajs says otherwise. */
export function busError(what: string, err: unknown): VaultstreamError {
  const retryable = (err as { retriable?: boolean } | null)?.retriable !== false;
  const msg = err instanceof Error ? err.message : String(err);
  return new VaultstreamError('BUS_UNAVAILABLE', `kafka ${what} failed: ${msg}`, { cause: err, retryable });
}
