/**
 * The eth_getLogs range sizer (ingest/evm/chain.ts): how the range follows the answers
 * (log counts, speed, refusals), and the fast decoder on hex in any case.
 */
import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { FIRST_RANGE, RangeSizer, TARGET_LOGS } from '../../ingest/evm/chain.ts';
import { decodeLog } from '../../ingest/evm/decode.ts';
import { decodeLogGeneric } from './evm-decode-support.ts';
import { A, addr, ev, logOf } from './evm-support.ts';

describe('RangeSizer', () => {
  it('starts at FIRST_RANGE blocks (at most maxBlockRange) and doubles on fast answers a quarter full, up to maxBlockRange', () => {
    expect(new RangeSizer(16).size).toBe(16);
    const s = new RangeSizer(2000);
    expect(s.size).toBe(FIRST_RANGE);
    const sizes = [];
    for (let k = 0; k < 8; k++) {
      s.succeeded(s.size, TARGET_LOGS / 4, 50);
      sizes.push(s.size);
    }
    expect(sizes).toEqual([200, 400, 800, 1600, 2000, 2000, 2000, 2000]);
  });

  it('grows by the room a fast answer left, at most 16 times: a sparse chain is soon read in wide ranges', () => {
    const s = new RangeSizer(100_000_000);
    const sizes = [];
    for (let k = 0; k < 4; k++) {
      s.succeeded(s.size, 0, 50);
      sizes.push(s.size);
    }
    expect(sizes).toEqual([1_600, 25_600, 409_600, 6_553_600]);
    s.succeeded(s.size, TARGET_LOGS / 8, 50);
    expect(s.size).toBe(4 * 6_553_600);
  });

  it('does not grow on slow answers, on answers near the log target, or on a range cut short by the head', () => {
    const s = new RangeSizer(2000);
    s.succeeded(s.size, 10, 5_000);
    expect(s.size).toBe(FIRST_RANGE);
    s.succeeded(s.size, TARGET_LOGS, 50);
    expect(s.size).toBe(FIRST_RANGE);
    s.succeeded(3, 0, 1);
    expect(s.size).toBe(FIRST_RANGE);
  });

  it('shrinks in proportion when an answer holds more logs than the target', () => {
    const s = new RangeSizer(2000);
    s.succeeded(100, 4 * TARGET_LOGS, 50);
    expect(s.size).toBe(25);
    s.succeeded(25, 1_000_000, 50);
    expect(s.size).toBe(1);
  });

  it('halves a refused range and never asks for the refused size again', () => {
    const s = new RangeSizer(2000);
    s.succeeded(s.size, TARGET_LOGS / 4, 1);
    s.succeeded(s.size, TARGET_LOGS / 4, 1);
    expect(s.size).toBe(400);
    expect(s.shrink(400)).toBe(true);
    expect(s.size).toBe(200);
    for (let k = 0; k < 10; k++) s.succeeded(s.size, 0, 1);
    expect(s.size).toBe(399);
    expect(s.shrink(1)).toBe(false);
  });
});

describe('the fast decoder', () => {
  it('reads argument topics and data in upper case as viem does', () => {
    const transfer = ev(abis.shareEvents, 'Transfer');
    const log = logOf(
      A.share,
      transfer,
      { from: addr(0xabc), to: addr(0xdef), amount: 0xabcdefn },
      {
        block: 1,
        tx: 1,
        index: 0,
      },
    );
    const upper = {
      ...log,
      // topic0 as the node writes it (viem matches it case-sensitively); the arguments in upper case.
      topics: log.topics.map((t, k) => (k ? (`0x${t.slice(2).toUpperCase()}` as const) : t)),
      data: `0x${log.data.slice(2).toUpperCase()}` as const,
    };
    const d = decodeLog('share', upper);
    expect(d?.args).toEqual({ from: addr(0xabc), to: addr(0xdef), amount: 0xabcdefn });
    expect(d).toEqual(decodeLogGeneric('share', upper));
  });
});
