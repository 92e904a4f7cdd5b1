/**
 * What the vault holds now (docs/architecture.md, Units and formulas), for the details' liquid funds, which
 * may read the balances live: the latest ASSET_BALANCE snapshot of each configured
 * liquid asset (its chain and contract), or the live balance, times its USD price,
 * the latest ASSET_PRICE snapshot of that token (on its chain or chain 0) or else
 * the configured `price`. The same formula over the snapshots alone, per day, is the
 * `liquid_funds_daily` view (performance-history); the yield assets and
 * compositionApy per day are the `composition_daily` and `composition_apy_daily`
 * views (api/read/vault-data.ts).
 */
import type { RegistryVault } from './registry.ts';
import type { DailyAsset, Snapshot } from './vault-data.ts';
import { decimalE18, fromE18, mulRaw } from './vault-numbers.ts';

/** Snapshots by kind, chain and token, ascending by time. */
export type SnapshotIndex = Map<string, Snapshot[]>;

const keyOf = (kind: string, chainId: number, token: string) => `${kind}|${chainId}|${token}`;

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
      // A chain that cannot be read now is answered from the last snapshot, as docs/architecture.md, Units and formulas says.
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

/** The output form of a yield asset's day (performance-history `assets`); a member the snapshot lacks is 0. */
export function assetOutput(a: DailyAsset) {
  const n = (v: bigint | null) => (v === null ? 0 : fromE18(v));
  return {
    price: fromE18(a.priceE18),
    apy7d: n(a.apy7dE18),
    apy30d: n(a.apy30dE18),
    compositionPct: n(a.weightE18),
  };
}
