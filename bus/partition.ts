import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
// kafkajs's own murmur2, so the in-process bus puts a key on the same partition Kafka's default partitioner would.
const murmur2: (
  key: string | Buffer,
) => number = require('kafkajs/src/producer/partitioners/default/murmur2.js');

/** Partition for a key, as the Java client and kafkajs's default partitioner compute it. */
export function partitionFor(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** Full topic name for an event family under the configured prefix. */
export function topicName(prefix: string, family: string): string {
  return `${prefix}${family}`;
}
