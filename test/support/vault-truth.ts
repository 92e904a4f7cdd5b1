/**
 * Expected values of the vault scenario (test/support/vault-scenario.ts), computed
 * from its event arrays with plain arithmetic, independently of the SQL and the API:
 * closes, supply, TVL, holders, liquid funds, composition, settled days and APYs.
 */
import { EVM_ZERO as ZERO } from './events.ts';
import { blocks, dayTs, NOW, PRIMARY, rates, snapshots, transfers, vaultConfigs } from './vault-scenario.ts';

const configOf = (slug: string) => vaultConfigs.find((v) => v.slug === slug) as (typeof vaultConfigs)[number];
/** Exclusive end of day i, capped at the clock (nothing after NOW is visible). */
const endOf = (i: number) => Math.min(dayTs(i + 1), NOW + 1);

/** The last rate on `chainId` before the end of day i, as a number (undefined before the first). */
export function truthClose(slug: string, chainId: number, i: number): number | undefined {
  const seen = rates.filter((r) => r.vault === slug && r.chainId === chainId && r.ts < endOf(i));
  const last = seen.sort((a, b) => a.ts - b.ts).at(-1);
  return last && Number(last.rate) / 10 ** last.decimals;
}

/** Share decimals on a chain, from the configured override. */
export function truthDecimals(slug: string, chainId: number): number {
  const o = configOf(slug).decimalsOverride.find((x) => x[String(chainId)] !== undefined);
  return o ? o[String(chainId)] : configOf(slug).decimals;
}

/** Raw supply on a chain at the end of day i. */
export function truthSupply(slug: string, chainId: number, i: number): bigint {
  let s = 0n;
  for (const t of transfers)
    if (t.vault === slug && t.chainId === chainId && t.ts < endOf(i)) {
      if (t.from === ZERO) s += t.amount;
      if (t.to === ZERO) s -= t.amount;
    }
  return s;
}

/** TVL in USD at the end of day i: per chain supply times that chain's close (else the primary's) times the base USD price. */
export function truthTvl(slug: string, i: number): number {
  const cfg = configOf(slug);
  let total = 0;
  for (const chainId of cfg.chainIds) {
    const price = truthClose(slug, chainId, i) ?? truthClose(slug, PRIMARY, i) ?? 0;
    total +=
      (Number(truthSupply(slug, chainId, i)) / 10 ** truthDecimals(slug, chainId)) *
      price *
      cfg.baseAsset.usdPrice;
  }
  return total;
}

/** Distinct holders with a positive balance on any chain, now. */
export function truthHolders(slug: string): number {
  const bal = new Map<string, bigint>();
  for (const t of transfers.filter((x) => x.vault === slug)) {
    if (t.from !== ZERO)
      bal.set(`${t.chainId}|${t.from}`, (bal.get(`${t.chainId}|${t.from}`) ?? 0n) - t.amount);
    if (t.to !== ZERO) bal.set(`${t.chainId}|${t.to}`, (bal.get(`${t.chainId}|${t.to}`) ?? 0n) + t.amount);
  }
  return new Set([...bal].filter(([, b]) => b > 0n).map(([k]) => k.split('|')[1])).size;
}

const latestSnap = (slug: string, kind: string, token: string, t: number, chainId?: number) =>
  snapshots
    .filter(
      (s) =>
        s.vault === slug &&
        s.kind === kind &&
        s.token === token &&
        s.ts <= t &&
        (chainId === undefined || s.chainId === chainId),
    )
    .sort((a, b) => a.ts - b.ts)
    .at(-1);

/** USD value of the configured liquid assets at time t (snapshot balance times snapshot or configured price). */
export function truthLiquid(slug: string, t: number): number {
  let total = 0;
  for (const a of configOf(slug).liquidAssets) {
    const bal = latestSnap(slug, 'ASSET_BALANCE', a.contractAddress.toLowerCase(), t, a.chainId);
    const price = latestSnap(slug, 'ASSET_PRICE', a.contractAddress.toLowerCase(), t);
    total += (Number(bal?.amount ?? 0n) / 10 ** a.decimals) * (price ? Number(price.usdPrice) : a.price);
  }
  return total;
}

/** Per targetComposition slug, its latest COMPOSITION snapshot at t (price from ASSET_PRICE when the snapshot has none). */
export function truthComposition(slug: string, t: number) {
  const out: Record<string, { price: number; apy7d: number; apy30d: number; compositionPct: number }> = {};
  for (const item of configOf(slug).targetComposition) {
    const s = latestSnap(slug, 'COMPOSITION', item.slug, t);
    if (!s) continue;
    const price = s.usdPrice ?? latestSnap(slug, 'ASSET_PRICE', item.slug, t)?.usdPrice ?? '0';
    out[item.slug] = {
      price: Number(price),
      apy7d: Number(s.apy7d),
      apy30d: Number(s.apy30d),
      compositionPct: Number(s.weight),
    };
  }
  return out;
}

/** Oldest watermark among the vault's chains, capped at NOW. */
export function truthSettledThrough(slug: string): number {
  return Math.min(NOW, ...configOf(slug).chainIds.map((c) => Math.max(...(blocks[c] ?? [0]))));
}

/** navApy of day i from the closes on `chainId`, straight from the docs/architecture.md, Units and formulas formulas. */
export function truthNavApy(slug: string, chainId: number, i: number) {
  const p = truthClose(slug, chainId, i);
  const p7 = truthClose(slug, chainId, i - 7);
  const p30 = truthClose(slug, chainId, i - 30);
  const have = (x: number | undefined): x is number => p !== undefined && x !== undefined;
  return {
    rolling7d: have(p7) ? ((p as number) / p7 - 1) * (365 / 7) * 100 : null,
    rolling30d: have(p30) ? ((p as number) / p30 - 1) * (365 / 30) * 100 : null,
    sec30d: have(p30) ? 2 * (((p as number) / p30) ** 6 - 1) * 100 : null,
  };
}

/** compositionApy at time t: weights of the targetComposition items only, renormalised. */
export function truthCompositionApy(slug: string, t: number) {
  const assets = Object.values(truthComposition(slug, t));
  const w = assets.reduce((s, a) => s + a.compositionPct, 0);
  if (!w) return { rolling7d: null, rolling30d: null, sec30d: null };
  const r7 = assets.reduce((s, a) => s + (a.compositionPct / w) * a.apy7d, 0);
  const r30 = assets.reduce((s, a) => s + (a.compositionPct / w) * a.apy30d, 0);
  return { rolling7d: r7, rolling30d: r30, sec30d: 2 * ((1 + ((r30 / 100) * 30) / 365) ** 6 - 1) * 100 };
}
