/**
 * Kafka's default partitioner (murmur2 of the key, positive, modulo the partition
 * count), so the in-process bus puts a key on the partition Kafka would. Written with
 * 32-bit integer math; test/unit/partition.test.ts holds it equal to kafkajs's own.
 */
const SEED = 0x9747b28c;
const M = 0x5bd1e995;

const utf8 = new TextEncoder();
/** A string key's UTF-8 bytes, written over for each key: a buffer per key was an allocation per record published. */
let scratch = new Uint8Array(256);

/** `key`'s UTF-8 bytes in `scratch` (grown while too small); how many. */
function encodeKey(key: string): number {
  for (;;) {
    const { read, written } = utf8.encodeInto(key, scratch);
    if (read === key.length) return written;
    scratch = new Uint8Array(scratch.length * 4);
  }
}

/** Kafka's murmur2 hash of `key` (UTF-8), as a signed 32-bit integer. */
export function murmur2(key: string | Buffer): number {
  const length = typeof key === 'string' ? encodeKey(key) : key.length;
  const data: Uint8Array = typeof key === 'string' ? scratch : key;
  let h = SEED ^ length;
  const length4 = length & ~3;
  for (let i = 0; i < length4; i += 4) {
    let k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M) ^ k;
  }
  const rem = length & 3;
  if (rem >= 3) h ^= data[length4 + 2] << 16;
  if (rem >= 2) h ^= data[length4 + 1] << 8;
  if (rem >= 1) {
    h ^= data[length4];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Partition for a key, as the Java client and kafkajs's default partitioner compute it. */
export function partitionFor(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}

/** Full topic name for an event family under the configured prefix. */
export function topicName(prefix: string, family: string): string {
  return `${prefix}${family}`;
}
