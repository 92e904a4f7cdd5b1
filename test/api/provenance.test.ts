/**
 * What every answer says it stands on (api/http/provenance.ts) over the vault scenario replayed
 * into chDB: `X-Data-Blocks` (per chain of the answer, the newest stored block), `?meta=1`, and
 * per day of performance-history whether it is settled. The expected blocks are the store's own
 * (`chain_watermarks`, read here by SQL); the settled days come from the scenario's watermarks
 * (test/support/vault-truth.ts).
 */
import { describe, expect, it } from 'vitest';
import { useVaultApi } from '../support/api-fixture.ts';
import { DAY } from '../support/events.ts';
import { MAINNET, NOW, PRIMARY, SLUG } from '../support/vault-scenario.ts';
import { truthSettledThrough } from '../support/vault-truth.ts';

const api = useVaultApi();

/** chain id -> newest stored block, as the store holds them. */
async function storedBlocks(): Promise<Map<number, number>> {
  const rows = await api.store.query<{ c: number; b: string }>(
    `SELECT chain_id AS c, toString(block_number) AS b FROM ${api.store.database}.chain_watermarks`,
  );
  return new Map(rows.map((r) => [Number(r.c), Number(r.b)]));
}

/** `X-Data-Blocks` as the store says it for `chains`. */
async function expectedHeader(chains: number[]): Promise<string> {
  const stored = await storedBlocks();
  return [...chains]
    .sort((a, b) => a - b)
    .map((c) => `${c}=${stored.get(c)}`)
    .join(',');
}

/** Start of the latest UTC day settled when every chain is past `through` (Unix seconds). */
const settledDay = (through: number) => through - (through % DAY) - DAY;

describe('provenance of the answers', () => {
  it('X-Data-Blocks names each chain of the answer with its newest stored block', async () => {
    const alpha = await api.get(`/v1/vaults/${SLUG.alpha}`);
    expect(alpha.headers.get('x-data-blocks')).toBe(await expectedHeader([PRIMARY, MAINNET]));
    const beta = await api.get(`/v1/vaults/${SLUG.beta}/performance-history`);
    expect(beta.headers.get('x-data-blocks')).toBe(await expectedHeader([PRIMARY]));
    // Read from the stored events, not the settled heads: the same blocks.
    const txs = await api.get(`/v1/vaults/recent-transactions?chainId=${MAINNET}`);
    expect(txs.headers.get('x-data-blocks')).toBe(await expectedHeader([MAINNET]));
    const tokenHolders = await api.get('/v1/token-holders');
    expect(tokenHolders.headers.get('x-data-blocks')).toBe(
      await expectedHeader([...(await storedBlocks()).keys()]),
    );
  });

  it('?meta=1 adds meta beside the same data, with an ETag of its own; the default shape has none', async () => {
    const plain = await api.get(`/v1/vaults/${SLUG.alpha}`);
    const withMeta = await api.get(`/v1/vaults/${SLUG.alpha}?meta=1`);
    expect(Object.keys(plain.body)).toEqual(['data']);
    expect(Object.keys(withMeta.body)).toEqual(['data', 'meta']);
    expect(withMeta.body.data).toEqual(plain.body.data);
    const watermark = Date.parse(plain.headers.get('x-data-watermark') as string) / 1000;
    const stored = await storedBlocks();
    expect(withMeta.body.meta).toEqual({
      watermark,
      blocks: { [MAINNET]: stored.get(MAINNET), [PRIMARY]: stored.get(PRIMARY) },
      settledThrough: settledDay(truthSettledThrough(SLUG.alpha)),
    });
    expect(watermark).toBe(truthSettledThrough(SLUG.alpha));
    const etag = withMeta.headers.get('etag') as string;
    expect(etag).not.toBe(plain.headers.get('etag'));
    const again = await api.request(`/v1/vaults/${SLUG.alpha}?meta=1`, {
      headers: { 'if-none-match': etag },
    });
    expect(again.status).toBe(304);
    // A streamed answer too (the token holders' snapshot).
    const holders = await api.get('/v1/token-holders?meta=1');
    expect(holders.body.meta.blocks).toEqual(Object.fromEntries([...stored].map(([c, b]) => [String(c), b])));
    expect(Object.keys(holders.body)).toEqual([
      ...Object.keys((await api.get('/v1/token-holders')).body),
      'meta',
    ]);
  });

  it('refuses a bad meta value with the error contract', async () => {
    const bad = await api.request(`/v1/vaults/${SLUG.alpha}?meta=2`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'BAD_PARAMETER', details: [{ in: 'query', path: 'meta' }] });
  });

  it('performance-history says per day whether it is settled; apy-history lists settled days only', async () => {
    for (const slug of Object.values(SLUG)) {
      const { history } = (
        await api.get(`/v1/vaults/${slug}/performance-history?startDate=${NOW - 20 * DAY}&endDate=${NOW}`)
      ).body.data;
      const through = truthSettledThrough(slug);
      expect(history.length).toBeGreaterThan(0);
      for (const d of history) expect(d.settled, `${slug} day ${d.day}`).toBe(d.day + DAY <= through);
      // Today is never settled; a settled day has its navApy computed, a provisional one null.
      const today = history.reduce((a: any, b: any) => (b.day > a.day ? b : a));
      expect(today.day + DAY).toBeGreaterThan(NOW);
      expect(today.settled).toBe(false);
      for (const d of history.filter((x: any) => !x.settled)) expect(d.vault.navApy).toBeNull();
      expect(history.some((d: any) => d.settled)).toBe(true);
    }
    const apy = (await api.get('/v1/vaults/apy-history')).body.data;
    for (const v of apy) for (const d of v.history) expect(d.settled).toBe(true);
  });
});
