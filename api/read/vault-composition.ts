/**
 * What the vault holds, from its state snapshots as of a time (DESIGN section 8):
 * - liquid funds: the latest ASSET_BALANCE snapshot of each configured liquid asset
 *   (its chain and contract) times its USD price, the latest ASSET_PRICE snapshot
 *   of that token (on its chain or chain 0) or else the configured `price`;
 * - composition: per `targetComposition` item (the yield assets), the latest
 *   COMPOSITION snapshot whose token is the item's slug (weight = compositionPct,
 *   apy7d, apy30d, USD price, else the item's ASSET_PRICE snapshot). Liquid assets
 *   and off-chain value are not targetComposition items, so compositionApy's
 *   weights cover the yield assets only, renormalised to 100.
 */
import type { ApyBlock } from './history-types.ts';
import type { RegistryVault } from './registry.ts';
import type { Snapshot } from './vault-data.ts';
import { decimalE18, fromE18, mulRaw } from './vault-numbers.ts';

/** Snapshots by kind, chain and token, ascending by time. */
export type SnapshotIndex = Map<string, Snapshot[]>;

const keyOf = (kind: string, chainId: number, token: string) =>
  // A composition weight is about the vault as a whole, whichever chain reported it.
  `${kind}|${kind === 'COMPOSITION' ? 0 : chainId}|${token}`;

/** Groups snapshots (ascending by `ts`) for as-of lookups. */
export function indexSnapshots(snapshots: readonly Snapshot[]): SnapshotIndex {
  const index: SnapshotIndex = new Map();
  for (const s of snapshots) {
    const k = keyOf(s.kind, s.chainId, s.token);
    const list = index.get(k);
    if (list) list.push(s);
    else index.set(k, [s]);
  }
  return index;
}

/** The latest snapshot of (kind, chain, token) taken at or before `t`. */
function latest(index: SnapshotIndex, kind: string, chainId: number, token: string, t: number) {
  const list = index.get(keyOf(kind, chainId, token)) ?? [];
  let lo = 0;
  let hi = list.length - 1;
  let found: Snapshot | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid].ts <= t) {
      found = list[mid];
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** USD price (e18) of `token` at `t` from ASSET_PRICE snapshots on `chainId`, or chain-agnostic ones (chain 0). */
function snapshotPrice(index: SnapshotIndex, chainId: number, token: string, t: number): bigint | undefined {
  const a = latest(index, 'ASSET_PRICE', chainId, token, t);
  const b = chainId === 0 ? undefined : latest(index, 'ASSET_PRICE', 0, token, t);
  const s = a && b ? (a.ts >= b.ts ? a : b) : (a ?? b);
  return s?.usdPrice == null ? undefined : decimalE18(s.usdPrice);
}

/** A liquid asset balance held by the vault, raw units. */
export interface LiquidBalance {
  chainId: number;
  /** Lower-case contract address. */
  contractAddress: string;
  amount: bigint;
}

/**
 * Reads the vault's liquid-asset balances from the chains at request time
 * (`liveLiquidity=true`). No implementation exists yet (the EVM reader issue);
 * a reader that throws makes the answer fall back to the snapshots.
 */
export interface LiveLiquidityReader {
  balances(vault: RegistryVault): Promise<LiquidBalance[]>;
}

export type LiquiditySource = 'live' | 'snapshot';

/** Balances of the configured liquid assets from their latest ASSET_BALANCE snapshots at or before `t`. */
export function snapshotBalances(v: RegistryVault, index: SnapshotIndex, t: number): LiquidBalance[] {
  return v.info.liquidAssets.map((a) => {
    const contractAddress = a.contractAddress.toLowerCase();
    const s = latest(index, 'ASSET_BALANCE', a.chainId, contractAddress, t);
    return { chainId: a.chainId, contractAddress, amount: s?.amount ?? 0n };
  });
}

/** The current balances: read live when a reader is given and answers, else the snapshots (and says which). */
export async function currentBalances(
  v: RegistryVault,
  index: SnapshotIndex,
  now: number,
  live?: LiveLiquidityReader,
): Promise<{ balances: LiquidBalance[]; source: LiquiditySource }> {
  if (live) {
    try {
      return { balances: await live.balances(v), source: 'live' };
    } catch {
      // A chain that cannot be read now is answered from the last snapshot, as DESIGN section 8 says.
    }
  }
  return { balances: snapshotBalances(v, index, now), source: 'snapshot' };
}

/** USD value (e18) of `balances` of the configured liquid assets, priced as of `t`. */
export function liquidFundsE18(
  v: RegistryVault,
  index: SnapshotIndex,
  balances: readonly LiquidBalance[],
  t: number,
): bigint {
  let total = 0n;
  for (const a of v.info.liquidAssets) {
    const contractAddress = a.contractAddress.toLowerCase();
    const held = balances.find((b) => b.chainId === a.chainId && b.contractAddress === contractAddress);
    if (!held) continue;
    const price = snapshotPrice(index, a.chainId, contractAddress, t) ?? decimalE18(a.price);
    total += mulRaw(price, held.amount, a.decimals);
  }
  return total;
}

/** One yield asset's state (exact e18 values). */
export interface AssetState {
  slug: string;
  priceE18: bigint;
  apy7dE18: bigint | null;
  apy30dE18: bigint | null;
  weightE18: bigint | null;
}

const e18OrNull = (s: string | null) => (s == null ? null : decimalE18(s));

/** The state of each targetComposition item with a COMPOSITION snapshot at or before `t`. */
export function compositionAt(v: RegistryVault, index: SnapshotIndex, t: number): AssetState[] {
  const out: AssetState[] = [];
  for (const item of v.info.targetComposition) {
    const s = latest(index, 'COMPOSITION', 0, item.slug, t);
    if (!s) continue;
    out.push({
      slug: item.slug,
      priceE18: e18OrNull(s.usdPrice) ?? snapshotPrice(index, 0, item.slug, t) ?? 0n,
      apy7dE18: e18OrNull(s.apy7d),
      apy30dE18: e18OrNull(s.apy30d),
      weightE18: e18OrNull(s.weight),
    });
  }
  return out;
}

/** sum(w * apy) / sum(w) over the assets having both; null when none has. */
function weighted(assets: readonly AssetState[], apy: (a: AssetState) => bigint | null): number | null {
  let num = 0n;
  let den = 0n;
  for (const a of assets) {
    const value = apy(a);
    if (value === null || a.weightE18 === null) continue;
    num += a.weightE18 * value;
    den += a.weightE18;
  }
  return den === 0n ? null : fromE18(num / den);
}

/** compositionApy (DESIGN section 8) of the yield assets' states. */
export function compositionApy(assets: readonly AssetState[]): ApyBlock {
  const rolling30d = weighted(assets, (a) => a.apy30dE18);
  return {
    rolling7d: weighted(assets, (a) => a.apy7dE18),
    rolling30d,
    sec30d: rolling30d === null ? null : 2 * ((1 + ((rolling30d / 100) * 30) / 365) ** 6 - 1) * 100,
  };
}

/** The output form of an asset state (performance-history `assets`); a member the snapshot lacks is 0. */
export function assetOutput(a: AssetState) {
  const n = (v: bigint | null) => (v === null ? 0 : fromE18(v));
  return {
    price: fromE18(a.priceE18),
    apy7d: n(a.apy7dE18),
    apy30d: n(a.apy30dE18),
    compositionPct: n(a.weightE18),
  };
}
