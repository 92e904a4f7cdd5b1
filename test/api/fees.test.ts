/**
 * GET /v1/vaults/fees over the activity scenario replayed into chDB: six daily USD
 * series per vault, every day of the range present, values from the fee events.
 */
import { describe, expect, it } from 'vitest';
import { responseBodies } from '../../api/http/responses.ts';
import { NOW_MS } from '../support/activity-scenario.ts';
import { canonical, units } from '../support/activity-truth.ts';
import { usdE18, useActivityApi } from '../support/api-fixture.ts';

const { s, api } = useActivityApi();

const SERIES = {
  MANAGEMENT: 'managementFee',
  PERFORMANCE: 'performanceFee',
  INSTANT_REDEMPTION: 'instantRedemptionFee',
  DEPOSIT: 'depositFee',
  REDEMPTION: 'redemptionFee',
  CLAIMED: 'feesClaimed',
} as const;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The expected answer for `slug` over [start, end]: USD of every canonical fee event, summed per day. */
function expectedFees(slug: string, start: string, end: string) {
  const sums = new Map<string, bigint>();
  for (const f of canonical(s.fees).filter((f) => f.vault === slug)) {
    const usd = (BigInt(f.amount) * usdE18(f.usdPrice)) / 10n ** BigInt(f.decimals);
    const k = `${f.kind}|${isoDay(f.blockTimestamp * 1000)}`;
    sums.set(k, (sums.get(k) ?? 0n) + usd);
  }
  const days: string[] = [];
  for (let t = Date.parse(start); t <= Date.parse(end); t += 86_400_000) days.push(isoDay(t));
  const out: Record<string, unknown> = { slug };
  for (const [kind, name] of Object.entries(SERIES))
    out[name] = days.map((date) => ({ date, value: units(sums.get(`${kind}|${date}`) ?? 0n, 18) }));
  return out;
}

describe('GET /v1/vaults/fees', () => {
  it('defaults to every vault over the year up to today, every day present', async () => {
    const res = await api.request('/v1/vaults/fees');
    expect(res.status).toBe(200);
    responseBodies['GET /vaults/fees'].parse(res.body);
    const end = isoDay(NOW_MS);
    const start = '2025-10-20'; // one calendar year before 2026-10-20
    expect(res.body.data).toEqual(['alpha', 'beta', 'gamma'].map((v) => expectedFees(v, start, end)));
    const alpha = res.body.data[0];
    expect(alpha.managementFee).toHaveLength(366);
    // the 420-day-old fees are outside, today's and the 364-day-old ones inside
    expect(alpha.feesClaimed.some((p: { value: number }) => p.value > 0)).toBe(true);
    const total = (series: { value: number }[]) => series.reduce((a, p) => a + p.value, 0);
    expect(total(alpha.performanceFee)).toBeGreaterThan(0);
  });

  it('takes repeated slugs and an explicit range; the retracted fee counts nowhere', async () => {
    const q = 'slug=beta&slug=alpha&startDate=2025-08-01&endDate=2026-10-20';
    const res = await api.request(`/v1/vaults/fees?${q}`);
    expect(res.body.data).toEqual([
      expectedFees('beta', '2025-08-01', '2026-10-20'),
      expectedFees('alpha', '2025-08-01', '2026-10-20'),
    ]);
    const ghost = s.fees.find((f) => f.removed)!;
    const day = isoDay(ghost.blockTimestamp * 1000);
    const published = s.fees.filter(
      (f) =>
        !f.removed &&
        f.vault === ghost.vault &&
        f.kind === ghost.kind &&
        isoDay(f.blockTimestamp * 1000) === day,
    );
    expect(published.length).toBeGreaterThan(1); // the day has the retracted fee and others
    const one = await api.request(`/v1/vaults/fees?slug=${ghost.vault}&startDate=${day}&endDate=${day}`);
    const series = SERIES[ghost.kind];
    expect(one.body.data[0][series]).toEqual(
      (expectedFees(ghost.vault, day, day) as Record<string, unknown>)[series],
    );
    expect(one.body.data[0][series][0].value).toBeGreaterThan(0);
  });

  it('404 for an unknown slug, 400 for bad dates', async () => {
    const nf = await api.request('/v1/vaults/fees?slug=alpha&slug=nope');
    expect(nf.status).toBe(404);
    for (const bad of [
      'startDate=2026-13-01',
      'endDate=20261020',
      'startDate=2026-10-21&endDate=2026-10-20',
      'startDate=1990-01-01',
    ]) {
      const r = await api.request(`/v1/vaults/fees?${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.code).toBe('BAD_PARAMETER');
    }
  });
});
