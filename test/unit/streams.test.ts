import { describe, expect, it } from 'vitest';
import { parseLine } from '../../ingest/replay.ts';
import { eventId, scaleDecimal, usdE18 } from '../../schemas/columns.ts';
import { FAMILIES } from '../../schemas/families.ts';
import { KeyRangeCollector, stateChangeIndexes } from '../../streams/dedup.ts';
import { toRow } from '../../streams/rows.ts';

describe('state-change deduplication', () => {
  const row = (id: string, removed: 0 | 1) => ({ event_id: id, removed });
  /** The rows `stateChangeIndexes` keeps. */
  const stateChanges = (rows: ReturnType<typeof row>[], stored: Map<string, boolean>) =>
    stateChangeIndexes(
      rows.map((r) => r.event_id),
      rows.map((r) => 1 - r.removed),
      stored,
    ).map((i) => rows[i]);

  it('keeps new events and drops ones already stored live', () => {
    const out = stateChanges([row('a', 0), row('b', 0), row('a', 0)], new Map([['b', true]]));
    expect(out).toEqual([row('a', 0)]);
  });

  it('keeps a retraction of a live event once, drops a retraction of nothing', () => {
    expect(stateChanges([row('a', 1), row('a', 1)], new Map([['a', true]]))).toEqual([row('a', 1)]);
    expect(stateChanges([row('z', 1)], new Map())).toEqual([]);
  });

  it('keeps the return of a retracted event (reorg back)', () => {
    expect(stateChanges([row('a', 0)], new Map([['a', false]]))).toEqual([row('a', 0)]);
    expect(stateChanges([row('a', 0), row('a', 1), row('a', 0)], new Map())).toEqual([
      row('a', 0),
      row('a', 1),
      row('a', 0),
    ]);
  });
});

describe('lookup ranges', () => {
  it('covers each (vault, chain) from its lowest to its highest block, in order of first appearance', () => {
    const r = (vault: string, chain_id: number, block_number: number) => ({ vault, chain_id, block_number });
    const rows = [r('a', 1, 50), r('b', 1, 7), r('a', 2, 9), r('a', 1, 40), r('a', 1, 70), r('b', 1, 7)];
    const ranges = new KeyRangeCollector();
    for (const x of rows) ranges.add(x.vault, x.chain_id, x.block_number);
    expect(ranges.ranges).toEqual([
      { vault: 'a', chainId: 1, from: 40, to: 70 },
      { vault: 'b', chainId: 1, from: 7, to: 7 },
      { vault: 'a', chainId: 2, from: 9, to: 9 },
    ]);
  });
});

describe('row helpers', () => {
  const hash = (c: string) => `0x${c.repeat(64)}`;
  const addr = (c: string) => `0x${c.repeat(40)}`;
  const chainEvent = {
    chainId: 98866,
    blockNumber: 1201,
    blockHash: hash('A'),
    blockTimestamp: 1759276800,
    txHash: hash('C'),
    logIndex: 3,
    removed: true,
    vault: 'nest-alpha',
  };

  it('maps a transfer to exactly its table columns, hex lower-cased, the amount untouched', () => {
    const amount = '115792089237316195423570985008687907853269984665640564039457584007913129639935';
    const row = toRow('transfers', {
      ...chainEvent,
      token: addr('D'),
      from: addr('e'),
      to: addr('F'),
      amount,
      transactionIndex: 17,
    });
    expect(row).toEqual({
      event_id: `98866:${hash('a')}:3`,
      chain_id: 98866,
      block_number: 1201,
      block_hash: hash('a'),
      block_time: 1759276800,
      tx_hash: hash('c'),
      log_index: 3,
      removed: 1,
      vault: 'nest-alpha',
      token: addr('d'),
      from_address: addr('e'),
      to_address: addr('f'),
      amount,
      transaction_index: 17,
    });
    expect(row.event_id).toBe(eventId(chainEvent));
    // A producer's transfer without it (Solana, transfers.v1) has the Avro default, -1.
    const { transactionIndex: _, ...v1 } = FAMILIES.transfers.schema.parse({
      ...chainEvent,
      token: addr('D'),
      from: addr('e'),
      to: addr('F'),
      amount: '1',
    });
    expect(toRow('transfers', v1).transaction_index).toBe(-1);
  });

  it('maps a fee with its exact USD value', () => {
    const row = toRow('fees', {
      ...chainEvent,
      removed: false,
      kind: 'MANAGEMENT',
      token: addr('A'),
      amount: '2500000',
      decimals: 6,
      usdPrice: '0.9998',
    });
    expect(Object.keys(row)).toEqual([
      'event_id',
      'chain_id',
      'block_number',
      'block_hash',
      'block_time',
      'tx_hash',
      'log_index',
      'removed',
      'vault',
      'kind',
      'token',
      'amount',
      'decimals',
      'usd_price',
      'usd_e18',
    ]);
    expect(row).toMatchObject({ removed: 0, token: addr('a'), usd_e18: '2499500000000000000' });
  });

  it('builds event ids from chain, lower-cased block hash and log index', () => {
    expect(eventId({ chainId: 1, blockHash: '0xABcd', logIndex: 4 })).toBe('1:0xabcd:4');
  });

  it('computes exact USD values', () => {
    expect(scaleDecimal('0.9998', 18)).toBe(999800000000000000n);
    expect(scaleDecimal('-1.5', 2)).toBe(-150n);
    expect(usdE18('2500000', 6, '0.9998')).toBe(2499500000000000000n);
    expect(
      usdE18('115792089237316195423570985008687907853269984665640564039457584007913129639935', 18, '1'),
    ).toBe(115792089237316195423570985008687907853269984665640564039457584007913129639935n);
  });
});

describe('replay line parsing', () => {
  it('explains what is wrong with a line', () => {
    expect(parseLine('{')).toMatchObject({ error: expect.stringMatching(/not JSON/) });
    expect(parseLine('[]')).toMatchObject({ error: 'expected a JSON object' });
    expect(parseLine('{"family":"dlq","record":{}}')).toMatchObject({
      error: expect.stringMatching(/unknown family/),
    });
    expect(parseLine('{"family":"roles","record":{"chainId":1}}')).toMatchObject({
      error: expect.stringMatching(/invalid roles record: blockNumber/),
    });
  });
});
