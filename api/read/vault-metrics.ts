/**
 * The vault resources of the spec (VaultInfo, VaultDetailsLite, VaultDetails)
 * from a `VaultContext` and the per-vault aggregates, with the units and
 * formulas of docs/architecture.md, Units and formulas:
 * - `tvl`, `tvl30DayChange`: the `vault_tvl_daily` view of today (supply per chain times
 *   that chain's close times the base asset's USD price);
 * - `volume24h`: USD value of DEPOSIT, WITHDRAW and INSTANT_REDEEM assets of the last
 *   24 h, and the open redemptions' shares and value: computed by the engine
 *   (api/read/vault-flows.ts, the `pending_redemptions` view);
 * - `sec30d` / `apy`: navApy (`nav_apy_daily`) of the latest settled day on the price chain
 *   (`sec30d` is 0 and `apy` members null when there is no such day or history);
 * - `liquidFunds`, `liquidFundsRange`: the `vault_liquidity_daily` row of today (through
 *   `metrics_vault_daily`), except with `liveLiquidity=true` (see `liveLiquidE18`);
 * - `pendingRedemptions`, `pendingRedemptionsValue` and `shortfall` = max(0,
 *   pendingRedemptionsValue - liquidFunds): the redemptions pending at the API clock (the open
 *   AtomicQueue requests and the ERC-7540 controllers' pendingRedeemRequest;
 *   api/read/vault-flows.ts), against those liquid funds.
 * Only the spec's fields are emitted: the registry's `status`, `chainIds`,
 * `baseAsset` and `roles` never reach a response. They are computed from a `VaultNow`, what the
 * vault's settled head says (api/read/vault-head.ts `headNow`) or, when there is none of today or
 * balances are read live, what its days say (`vaultNow`, from a `VaultContext`).
 */
import type { z } from 'zod';
import type { VaultConfig } from '../../core/settings/registry.ts';
import { type vaultDetails, vaultDetailsLite, vaultInfo } from '../http/resources.ts';
import { type ApyBlock, NULL_APY } from './history-types.ts';
import { toUnits, type VaultPrice } from './prices.ts';
import type { RegistryVault } from './registry.ts';
import {
  type LiquiditySource,
  type LiquidPrices,
  type LiveLiquidityReader,
  liveLiquidFundsE18,
} from './vault-composition.ts';
import { latestSettledDay, navApy, type VaultContext, vaultDay } from './vault-days.ts';
import type { PendingRedemptions } from './vault-flows.ts';
import { dayStart, fromE18, ratio } from './vault-numbers.ts';

/** What the vault resources say of one vault at the API clock: today's numbers and the latest settled navApy. */
export interface VaultNow {
  vault: RegistryVault;
  /** Today's TVL, e18 USD (0 before any supply). */
  tvlE18: bigint;
  /** tvl30DayChange of today, percent. */
  tvl30DayChange: number;
  /** Today's liquid funds, e18 USD, and liquidFundsRange, percent, from the snapshots. */
  liquidE18: bigint;
  liquidRange: number;
  /** navApy of the latest settled day on the price chain; every member null without one. */
  apy: ApyBlock;
  /** The current share price; undefined while the vault has no rate. */
  current: VaultPrice | undefined;
  holders: number;
  /** Today's USD price of each liquid asset: read for liveLiquidity=true only (empty otherwise). */
  liquidPrices: LiquidPrices;
}

/** The `VaultNow` of a context read from the days (api/read/vault-context.ts, `'head'` days). */
export function vaultNow(ctx: VaultContext): VaultNow {
  const day = vaultDay(ctx, dayStart(ctx.now));
  return {
    vault: ctx.vault,
    tvlE18: day?.tvlE18 ?? 0n,
    tvl30DayChange: day?.tvl30DayChange ?? 0,
    liquidE18: day?.liquidE18 ?? 0n,
    liquidRange: day?.liquidRange ?? 0,
    apy: latestNavApy(ctx),
    current: ctx.current,
    holders: ctx.holders,
    liquidPrices: ctx.series.liquidPrices,
  };
}

/**
 * `liveLiquidity=true`: the liquid funds (e18 USD) of the balances read from the chains at
 * request time, at today's prices of the view (vault-composition.ts); undefined when no reader
 * is given or it fails (the view's snapshot answer is then used), and liquidFundsRange and the
 * shortfall follow that live number.
 */
async function liveLiquidE18(n: VaultNow, live?: LiveLiquidityReader): Promise<bigint | undefined> {
  if (!live) return undefined;
  try {
    return liveLiquidFundsE18(n.vault, n.liquidPrices, await live.balances(n.vault));
  } catch {
    // A chain that cannot be read now is answered from the last snapshot (docs/architecture.md#units-and-formulas).
    return undefined;
  }
}

export type VaultInfo = z.infer<typeof vaultInfo>;
export type VaultDetailsLite = z.infer<typeof vaultDetailsLite>;
export type VaultDetails = z.infer<typeof vaultDetails>;

/** Aggregates read per request, at the API clock, for the vaults being answered. */
export interface VaultAggregates {
  /** volume24h per vault, USD e18 (api/read/vault-flows.ts). */
  volume: Map<string, bigint>;
  /** Open redemption requests per vault (details only). */
  pending?: Map<string, PendingRedemptions>;
}

const liteKeys = Object.keys(vaultDetailsLite.shape);
/** VaultInfo fields up to and including `targetComposition`, in the spec's order. */
const STATIC_KEYS = liteKeys.slice(0, liteKeys.indexOf('targetComposition') + 1);
const CHAIN_KEYS = Object.keys(vaultInfo.shape.chain.shape);
// The spec's ChainMap names every key and `solana` is required: unconfigured ones are answered empty.
const NO_CHAIN = { startBlock: 0, accountantType: '' };
const NO_SOLANA = { mintAddress: '', oftStoreAddress: '', composerAddress: '', decimals: 0, startBlock: 0 };

const chainMap = (m: VaultConfig['chain']) =>
  Object.fromEntries(CHAIN_KEYS.map((k) => [k, m[k as keyof typeof m] ?? NO_CHAIN]));

/** The configured static VaultInfo fields of `v`, in order, and nothing else. */
export function staticFields(v: RegistryVault): Record<string, unknown> {
  const info = v.info;
  const filled: Record<string, unknown> = {
    ...info,
    chain: chainMap(info.chain),
    coreAccountant: { ...info.coreAccountant, chain: chainMap(info.coreAccountant.chain) },
    solana: info.solana ?? NO_SOLANA,
  };
  return Object.fromEntries(STATIC_KEYS.map((k) => [k, filled[k]]));
}

/** navApy of the latest settled day on the price chain; every member null without one. */
function latestNavApy(ctx: VaultContext) {
  const day = latestSettledDay(ctx);
  return day === undefined ? NULL_APY : navApy(ctx, ctx.priceChain, day);
}

const volume24h = (n: VaultNow, agg: VaultAggregates) => fromE18(agg.volume.get(n.vault.slug) ?? 0n);

/** The VaultInfo of a vault. */
export function vaultInfoOf(n: VaultNow, agg: VaultAggregates): VaultInfo {
  return {
    ...staticFields(n.vault),
    sec30d: n.apy.sec30d ?? 0,
    tvl: fromE18(n.tvlE18),
    numHolders: n.holders,
    volume24h: volume24h(n, agg),
  } as VaultInfo;
}

/** A details resource and where its liquid balances came from. */
export interface Answer<T> {
  value: T;
  liquiditySource: LiquiditySource;
}

/** The VaultDetailsLite of a vault (liquid balances live when `live` is given and answers). */
export async function detailsLiteOf(
  n: VaultNow,
  agg: VaultAggregates,
  live?: LiveLiquidityReader,
): Promise<Answer<VaultDetailsLite> & { liquidE18: bigint }> {
  const liveE18 = await liveLiquidE18(n, live);
  const value = {
    ...staticFields(n.vault),
    tvl: fromE18(n.tvlE18),
    tvl30DayChange: n.tvl30DayChange,
    volume24h: volume24h(n, agg),
    apy: n.apy,
    tokenPrice: n.current ? toUnits(n.current.rateRaw, n.current.rateDecimals) : 0,
    tokenPriceUpdatedAtEpoch: n.current?.updatedAt ?? 0,
    liquidFunds: fromE18(liveE18 ?? n.liquidE18),
    liquidFundsRange:
      liveE18 === undefined
        ? n.liquidRange
        : n.tvlE18 === 0n
          ? 0
          : (ratio(liveE18, n.tvlE18) as number) * 100,
    holders: n.holders,
  } as VaultDetailsLite;
  return {
    value,
    liquiditySource: liveE18 === undefined ? 'snapshot' : 'live',
    liquidE18: liveE18 ?? n.liquidE18,
  };
}

/** The VaultDetails of a vault: details-lite plus the open redemptions and the shortfall. */
export async function detailsOf(
  n: VaultNow,
  agg: VaultAggregates,
  live?: LiveLiquidityReader,
): Promise<Answer<VaultDetails>> {
  const lite = await detailsLiteOf(n, agg, live);
  const pending = agg.pending?.get(n.vault.slug) ?? { sharesE18: 0n, valueE18: 0n };
  // One clock: the requests open at the API clock against today's liquid funds (read live when asked).
  const shortfall = pending.valueE18 > lite.liquidE18 ? pending.valueE18 - lite.liquidE18 : 0n;
  const value = {
    ...lite.value,
    tokenPriceUpdatedAt: new Date(lite.value.tokenPriceUpdatedAtEpoch * 1000).toISOString(),
    pendingRedemptions: fromE18(pending.sharesE18),
    pendingRedemptionsValue: fromE18(pending.valueE18),
    shortfall: fromE18(shortfall),
  } as VaultDetails;
  return { value, liquiditySource: lite.liquiditySource };
}
