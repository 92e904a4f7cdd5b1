import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { murmur2, partitionFor } from '../../bus/partition.ts';

const require = createRequire(import.meta.url);
const kafkajsMurmur2: (
  key: string,
) => number = require('kafkajs/src/producer/partitioners/default/murmur2.js');

describe('partitioner', () => {
  it("matches kafkajs's murmur2 (Kafka's default partitioner) on every key length and on non-ASCII keys", () => {
    // Longer keys than murmur2's first 256-byte scratch (and a multibyte one), then short ones again.
    const long = ['z'.repeat(5000), 'é€'.repeat(300), 'a'.repeat(255), '€'.repeat(86)];
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'nest-alpha', '98866', 'é€😀', '5'.repeat(88), ...long, 'x'];
    for (let i = 0; i < 2000; i++) keys.push(`vault-${i}-${'x'.repeat(i % 13)}`);
    for (const k of keys) expect(murmur2(k), k).toBe(kafkajsMurmur2(k) | 0);
  });

  it('spreads keys over every partition', () => {
    const seen = new Set(Array.from({ length: 200 }, (_, i) => partitionFor(`k${i}`, 4)));
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
  });
});
