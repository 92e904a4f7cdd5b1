/** /vaults/fees = docs/queries/api-fees.sql over fees_daily_by_kind, on the activity scenario (it has fees of every kind, claims and a retraction). */
import { describe, expect, it } from 'vitest';
import { useActivityApi } from '../support/api-fixture.ts';
import { runDoc } from '../support/doc-queries.ts';

const { s: activity, api: activityApi } = useActivityApi();

describe('views parity: fees', () => {
  it('fees: every series of every vault and day (activity scenario, claims apart)', async () => {
    const start = '2025-08-01';
    const end = '2026-10-20';
    let nonZero = 0;
    for (const v of activity.vaults) {
      const slug = v.record.slug;
      const rows = await runDoc(activityApi, 'api-fees', { slug, start, end });
      const [body] = (await activityApi.get(`/v1/vaults/fees?slug=${slug}&startDate=${start}&endDate=${end}`))
        .body.data;
      for (const series of [
        'managementFee',
        'performanceFee',
        'instantRedemptionFee',
        'depositFee',
        'redemptionFee',
        'feesClaimed',
      ]) {
        expect(body[series].map((p: { date: string }) => p.date)).toEqual(rows.map((r) => r.date));
        for (const [i, p] of body[series].entries()) {
          expect(p.value, `${slug} ${p.date} ${series}`).toBe(Number(rows[i][series]));
          if (p.value !== 0) nonZero++;
        }
      }
    }
    expect(nonZero).toBeGreaterThan(5);
  });
});
