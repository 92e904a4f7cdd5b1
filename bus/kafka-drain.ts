/**
 * Waiting for a Kafka consumer group to catch up: KafkaSubscription.drained()
 * (bus/kafka-subscription.ts) polls the group's committed offsets against the topics' high watermarks.
 */
import type { Admin } from 'kafkajs';
import { VaultstreamError } from '../core/errors.ts';
import { busError } from './kafka-errors.ts';

const DRAIN_POLL_MS = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once the group's committed offset reached, on every partition of `topics`, the high
 * watermark at call time. Rejects (BUS_UNAVAILABLE) if `stopping()` was already true before a poll
 * that found the group still behind.
 */
export async function waitUntilDrained(
  admin: Admin,
  groupId: string,
  topics: string[],
  stopping: () => boolean,
): Promise<void> {
  const targets = new Map<string, bigint>();
  try {
    for (const topic of topics) {
      for (const o of await admin.fetchTopicOffsets(topic)) {
        targets.set(`${topic}/${o.partition}`, BigInt(o.high) > BigInt(o.low) ? BigInt(o.high) : -1n);
      }
    }
  } catch (err) {
    throw busError('fetchTopicOffsets', err);
  }
  for (;;) {
    const wasStopping = stopping();
    let done = true;
    try {
      for (const t of await admin.fetchOffsets({ groupId, topics })) {
        for (const p of t.partitions) {
          const target = targets.get(`${t.topic}/${p.partition}`) ?? -1n;
          if (BigInt(p.offset) < target) done = false;
        }
      }
    } catch (err) {
      throw busError('fetchOffsets', err);
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
