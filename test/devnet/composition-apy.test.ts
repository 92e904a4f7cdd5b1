/**
 * The devnet's ground-truth compositionApy (devnet/sim/composition-apy.ts) reads each day-keyed
 * series at or before a day: the latest day not after it, whatever order the days were added in,
 * null before the first. Worked by hand on sparse series (prices and holdings on a few days, on
 * two chains).
 */
import { describe, expect, it } from 'vitest';
import { compositionApyTruth } from '../../devnet/sim/composition-apy.ts';

describe('ground-truth compositionApy', () => {
  // Days inserted out of order on purpose.
  const yieldPrices = {
    '1': {
      A: { '2026-01-31': '1010000', '2026-01-01': '1000000' },
      B: { '2026-01-05': '2000000' },
    },
  };
  const yieldHoldings = {
    '1': { S: { A: { '2026-01-01': '1000000' } } },
    '2': { S: { B: { '2026-01-10': '500000' } } },
  };
  const out = compositionApyTruth(1, ['S'], yieldPrices, yieldHoldings, '2026-01-31').S;

  it('weights by the USD held at each day, from the latest price and holding at or before it', () => {
    expect(Object.keys(out)).toHaveLength(31);
    // No B price before 01-05, no B held before 01-10: all in A.
    expect(out['2026-01-03'].weights).toEqual({ A: 100, B: 0 });
    expect(out['2026-01-07'].weights).toEqual({ A: 100, B: 0 });
    // 1 A at 1.00 and 0.5 B at 2.00 (held on chain 2).
    expect(out['2026-01-12'].weights).toEqual({ A: 50, B: 50 });
    expect(out['2026-01-31'].weights.A).toBeCloseTo((1.01 / 2.01) * 100, 10);
  });

  it('annualizes each asset over N days back (the price at or before), skipping one with no history', () => {
    const wA = 1.01 / 2.01;
    const wB = 1 / 2.01;
    const a30 = (1.01 / 1 - 1) * (365 / 30) * 100;
    const a7 = (1.01 / 1 - 1) * (365 / 7) * 100; // 01-24 reads 01-01's price
    const last = out['2026-01-31'];
    expect(last.rolling30d).toBeCloseTo(a30, 10); // B has no price 30 days back
    expect(last.rolling7d).toBeCloseTo((wA * a7 + wB * 0) / (wA + wB), 10);
    expect(out['2026-01-03'].rolling7d).toBeNull(); // nothing 7 days before the first price
  });
});
