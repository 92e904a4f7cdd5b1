/**
 * A Kafka partition's fetched-but-unhandled messages, as the consumer side of the bus
 * (bus/kafka-subscription.ts) accumulates them across fetches into batches.
 */
import type { KafkaMessage } from 'kafkajs';
import type { ConsumedMessage } from './types.ts';

/** Messages of one partition fetched but not yet handed to the handler. */
export interface PartitionBuffer {
  topic: string;
  partition: number;
  /** Buffered, un-handled messages in offset order; at their first offset everything before is handled. */
  messages: ConsumedMessage[];
  /** Offset after the last message buffered or handled; refetched messages below it are skipped. */
  next?: bigint;
  /** When the current batch window opened (the first message buffered since the last hand-over). */
  openedAt: number;
  /** Latest high watermark seen, for `Batch.lag`. */
  high: bigint;
  /** Fires at the window's end when no fetch brings the partition back to eachBatch by itself. */
  timer?: NodeJS.Timeout;
  /** An eachBatch call of this partition is running (it checks the deadline itself). */
  active: boolean;
}

/** An empty buffer for a partition first seen in this generation. */
export function newPartitionBuffer(topic: string, partition: number): PartitionBuffer {
  return { topic, partition, messages: [], openedAt: 0, high: -1n, active: false };
}

/** A kafkajs message as the bus hands it over: string key and headers (the last value of a repeated one), bigint offset. */
export function toConsumed(m: KafkaMessage): ConsumedMessage {
  const headers: Record<string, string> = {};
  // for-in: no entries array per message (most carry no headers).
  for (const name in m.headers) {
    const v = m.headers[name];
    const last = Array.isArray(v) ? v[v.length - 1] : v;
    if (last !== undefined) headers[name] = last.toString();
  }
  return {
    key: m.key ? m.key.toString('utf8') : '',
    value: m.value ?? Buffer.alloc(0),
    headers,
    offset: BigInt(m.offset),
  };
}
