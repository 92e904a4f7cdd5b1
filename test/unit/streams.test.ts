import { describe, expect, it } from 'vitest';
import { parseLine } from '../../ingest/replay.ts';
import { stateChanges } from '../../streams/dedup.ts';
import { eventId, scaleDecimal, usdE18 } from '../../streams/rows.ts';

describe('state-change deduplication', () => {
  const row = (id: string, removed: 0 | 1) => ({ event_id: id, removed });

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

describe('row helpers', () => {
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
