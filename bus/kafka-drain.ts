/**
 * Waiting for a Kafka consumer group to catch up: KafkaSubscription.drained()
 * (bus/kafka-subscription.ts) polls the group's committed offsets against the topics' high watermarks.
 */
import type { Admin } from 'kafkajs';
import { VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import { busError, isPermanentKafkaError } from './kafka-errors.ts';

const DRAIN_POLL_MS = 200;
/** Between polls that failed with a retriable error (a broker restarting, a coordinator moving). */
const DRAIN_RETRY_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the group's committed offset reached, on every partition of `topics`, the high
 * watermark at call time. A failed poll (the broker down or restarting, the coordinator moving:
 * the consumer itself rides through those) is logged and retried; the wait rejects
 * (BUS_UNAVAILABLE) on a permanent failure, or once `stopping()` was true before a poll that
 * failed or found the group still behind.
 */
export async function waitUntilDrained(
  admin: Admin,
  groupId: string,
  topics: string[],
  stopping: () => boolean,
  logger: Logger,
): Promise<void> {
  /** Runs one admin call, retrying it while it fails retriably and the subscription runs. */
  const attempt = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    for (let failures = 0; ; failures++) {
      const wasStopping = stopping();
      try {
        return await call();
      } catch (err) {
        if (isPermanentKafkaError(err) || wasStopping) throw busError(what, err);
        // The first failure of an outage at debug (a coordinator move is routine), later ones at warn.
        logger[failures === 0 ? 'debug' : 'warn'](
          { err: err instanceof Error ? err.message : String(err), groupId },
          'drain poll failed, retrying',
        );
        await sleep(DRAIN_RETRY_MS);
      }
    }
  };

  const targets = new Map<string, bigint>();
  for (const topic of topics) {
    for (const o of await attempt('fetchTopicOffsets', () => admin.fetchTopicOffsets(topic))) {
      targets.set(`${topic}/${o.partition}`, BigInt(o.high) > BigInt(o.low) ? BigInt(o.high) : -1n);
    }
  }
  for (;;) {
    const wasStopping = stopping();
    let done = true;
    for (const t of await attempt('fetchOffsets', () => admin.fetchOffsets({ groupId, topics }))) {
      for (const p of t.partitions) {
        const target = targets.get(`${t.topic}/${p.partition}`) ?? -1n;
        if (BigInt(p.offset) < target) done = false;
      }
    }
    if (done) return;
    if (wasStopping) {
      throw new VaultstreamError('BUS_UNAVAILABLE', `subscription ${groupId} stopped before it drained`, {
        retryable: false,
      });
    }
    await sleep(DRAIN_POLL_MS);
  }
}
