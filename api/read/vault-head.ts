/**
 * The head of the vault resources: `metrics_vault_head` (migration 025), one row per vault that
 * views/settle.ts writes for the settle clock's UTC day from the settled tables, the registry and
 * the watermarks (docs/architecture.md#precomputed-metrics). It holds the registry entry, the
 * vault's watermark, the first day of its price history, the current price and holders, today's
 * TVL, tvl30DayChange, liquid funds and liquidFundsRange, and the navApy of the latest settled day:
 * everything VaultInfo and the details read but volume24h and the open redemptions, in one short
 * read. The values are the settled tables' own; nothing is computed here.
 */
import type { Store } from '../../store/client.ts';
import type { VaultStatus } from '../http/params.ts';
import type { ChainBlocks, Provenance } from '../http/provenance.ts';
import { commonBlocks } from './activity-watermark.ts';
import { NULL_APY } from './history-types.ts';
import type { VaultPrice } from './prices.ts';
import { REGISTRY_COLUMNS, type RegistryRow, type RegistryVault, registryVaultOf } from './registry.ts';
import { SHORT_READ } from './short-read.ts';
import type { LoadedContexts } from './vault-context.ts';
import { emptySeries, loadVaultSeries, type SeriesDays } from './vault-data.ts';
import { chainsOf, latestSettledDayOf, settledThrough, type VaultContext } from './vault-days.ts';
import { loadFlows, type VaultFlows } from './vault-flows.ts';
import type { VaultNow } from './vault-metrics.ts';
import { dateSeconds, dayStart } from './vault-numbers.ts';

interface HeadRow extends RegistryRow {
  /** UTC day the row was written for, YYYY-MM-DD. */
  day: string;
  /** Unix seconds. */
  watermark: number;
  /** Chain id -> block number, as the engine writes a Map (64-bit numbers quoted). */
  blocks: Record<string, string | number>;
  /** YYYY-MM-DD, or null without a price history. */
  first_day: string | null;
  has_price: number;
  chain_id: number;
  holders: string;
}

/** The vault resources' numbers in a head row (loadHeads with `numbers`). */
interface HeadNumbers {
  rate: string;
  rate_decimals: number;
  /** Unix seconds. */
  updated_at: number;
  tvl: string;
  change: number;
  liquid: string;
  range: number;
  r7: number | null;
  r30: number | null;
  sec: number | null;
}

/** Which vaults: one slug, or every vault with one of the statuses. */
export type HeadSelection = { slug: string } | { statuses: readonly VaultStatus[] };

/** One vault's head: its registry entry and the context it answers with. */
export interface VaultHead {
  vault: RegistryVault;
  /** UTC day start (Unix seconds) the row was written for. */
  day: number;
  row: HeadRow & Partial<HeadNumbers>;
}

/**
 * The head columns every reader needs: registry entry, day, watermark, first day, price chain and
 * holders. Few columns and no conversions the API can do itself: each column read and each
 * function costs the statement time (big integers come back as strings, see store/client.ts).
 */
const HEAD_COLUMNS = `toString(vault) AS slug, ${REGISTRY_COLUMNS}, day, toUnixTimestamp(watermark) AS watermark,
  blocks, first_day, has_price, chain_id, holders`;

/** The vault resources' numbers besides (VaultInfo, details). */
const NUMBER_COLUMNS = `rate_raw AS rate, rate_decimals, toUnixTimestamp(updated_at) AS updated_at,
  tvl_usd_e18 AS tvl, tvl_30d_change_pct AS change, liquid_funds_usd_e18 AS liquid, liquid_funds_range_pct AS range,
  nav_rolling7d AS r7, nav_rolling30d AS r30, nav_sec30d AS sec`;

/**
 * The heads of the selected vaults, ordered by slug (empty before the first settle); with
 * `numbers`, the vault resources' numbers too.
 */
export async function loadHeads(
  store: Store,
  which: HeadSelection,
  opts: { numbers?: boolean } = {},
): Promise<VaultHead[]> {
  const where = 'slug' in which ? 'vault = {slug:String}' : 'status IN {statuses:Array(String)}';
  const rows = await store.query<HeadRow & Partial<HeadNumbers>>(
    `SELECT ${HEAD_COLUMNS}${opts.numbers ? `, ${NUMBER_COLUMNS}` : ''}
     FROM ${store.database}.metrics_vault_head FINAL WHERE ${where} ${SHORT_READ}`,
    which,
  );
  // Ordered here: an ORDER BY costs the statement more than this sort of a few rows.
  rows.sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  return rows.map((row) => ({ vault: registryVaultOf(row), day: dateSeconds(row.day), row }));
}

const num = (v: number | string | null) => (v === null ? null : Number(v));

/**
 * What the head says of its vault at `now` (Unix seconds): today's numbers, and the navApy of the
 * settle clock's latest settled day, the same UTC day as the API clock's when the row is of today
 * (both clocks are then in the same day); every member null when no day is settled yet.
 */
export function headNow(h: VaultHead, now: number): VaultNow {
  const r = numbersOf(h);
  const current = currentOf(h);
  const settled = latestSettledDayOf(firstDayOf(h, now), Math.min(now, Number(r.watermark)));
  return {
    vault: h.vault,
    tvlE18: BigInt(r.tvl),
    tvl30DayChange: Number(r.change),
    liquidE18: BigInt(r.liquid),
    liquidRange: Number(r.range),
    apy:
      current && settled !== undefined
        ? { rolling7d: num(r.r7), rolling30d: num(r.r30), sec30d: num(r.sec) }
        : NULL_APY,
    current,
    holders: Number(r.holders),
    liquidPrices: new Map(),
  };
}

/** The head's numbers; a head read without them is a programming error. */
function numbersOf(h: VaultHead): HeadRow & HeadNumbers {
  if (h.row.rate === undefined) throw new Error(`head of ${h.vault.slug} read without its numbers`);
  return h.row as HeadRow & HeadNumbers;
}

/** The price chain in a head row; undefined while the vault has no rate. */
const priceChainOf = (h: VaultHead): number | undefined =>
  Number(h.row.has_price) === 1 ? Number(h.row.chain_id) : undefined;

/** The current price in a head row read with its numbers; undefined while the vault has no rate. */
function currentOf(h: VaultHead): VaultPrice | undefined {
  const r = numbersOf(h);
  return Number(r.has_price) === 1
    ? {
        vault: h.vault.slug,
        chainId: Number(r.chain_id),
        rateRaw: BigInt(r.rate),
        rateDecimals: Number(r.rate_decimals),
        updatedAt: Number(r.updated_at),
      }
    : undefined;
}

/** The first day of the head's price history, if it is on or before the API clock's day. */
function firstDayOf(h: VaultHead, now: number): number | undefined {
  const first = h.row.first_day === null ? undefined : dateSeconds(h.row.first_day);
  return first !== undefined && first <= dayStart(now) ? first : undefined;
}

/**
 * The contexts of the selected vaults over `days` (the histories): the vault, its watermark,
 * first day and price chain from its head, whatever the head's day (none of them depends on
 * the clock), and the days from the daily tables (vault-data.ts), with the closes and navApy of
 * `days.chains` or else of the price chains only; undefined without heads. `alongside`, given the
 * vaults, reads what else the answer needs while the days are read (its result is `alongside`):
 * the store runs the two statements back to back, without a round trip between them.
 */
export async function loadHeadRangeContexts<T = undefined>(
  store: Store,
  which: HeadSelection,
  nowMs: number,
  days: SeriesDays,
  alongside?: (vaults: RegistryVault[]) => Promise<T>,
): Promise<(LoadedContexts & { vaults: RegistryVault[]; alongside?: T }) | undefined> {
  const now = Math.floor(nowMs / 1000);
  const heads = await loadHeads(store, which);
  if (!heads.length) return undefined;
  const firstDays = new Map(heads.map((h) => [h.vault.slug, firstDayOf(h, now)]));
  // The closes and navApy of the chains asked for, else of the vaults' price chains.
  const chains = days.chains ?? [...new Set(heads.flatMap((h) => priceChainOf(h) ?? []))];
  const [series, other] = await Promise.all([
    loadVaultSeries(
      store,
      heads.map((h) => h.vault.slug),
      now,
      { ...days, firstDays, chains },
    ),
    alongside?.(heads.map((h) => h.vault)),
  ]);
  const contexts = heads.map((h): VaultContext => {
    const s = series.get(h.vault.slug) ?? emptySeries();
    s.watermark = Number(h.row.watermark);
    return {
      vault: h.vault,
      series: s,
      // The histories read no current price, only its chain (the head's rate is not read).
      current: undefined,
      priceChain: priceChainOf(h),
      holders: Number(h.row.holders),
      settledThrough: settledThrough(s, now),
      now,
    };
  });
  return { vaults: heads.map((h) => h.vault), contexts, ...headsProvenance(heads), alongside: other };
}

/**
 * The answer's provenance, as of the settles that wrote the heads: the watermark, the oldest among
 * the vaults' chains (null when one has none yet), and per chain the lowest block of the heads.
 */
export function headsProvenance(heads: readonly VaultHead[]): Provenance {
  const marks = heads.filter((h) => chainsOf(h.vault).length).map((h) => Number(h.row.watermark));
  const blocks = commonBlocks(heads.map((h) => blocksOf(h.row.blocks)));
  return { watermark: marks.length && marks.every((m) => m > 0) ? Math.min(...marks) : null, blocks };
}

/** A head's block map as numbers. */
function blocksOf(m: HeadRow['blocks'] | undefined): ChainBlocks {
  const out: ChainBlocks = {};
  for (const [c, b] of Object.entries(m ?? {})) out[Number(c)] = Number(b);
  return out;
}

/**
 * What the heads of the selected vaults say at `nowMs` (the API clock), with their volume24h and
 * (when `pending`) open redemptions at that clock (api/read/vault-flows.ts, a second statement),
 * when every head is of the API clock's UTC day; undefined otherwise (no head yet, or a clock on
 * another day), and the caller reads the days instead (vault-context.ts).
 */
export async function loadHeadNows(
  store: Store,
  which: HeadSelection,
  nowMs: number,
  pending = false,
): Promise<(Provenance & { vaults: RegistryVault[]; nows: VaultNow[]; flows: VaultFlows }) | undefined> {
  const now = Math.floor(nowMs / 1000);
  const heads = await loadHeads(store, which, { numbers: true });
  if (!heads.length || heads.some((h) => h.day !== dayStart(now))) return undefined;
  const vaults = heads.map((h) => h.vault);
  return {
    vaults,
    nows: heads.map((h) => headNow(h, now)),
    ...headsProvenance(heads),
    flows: await loadFlows(store, vaults, now, pending),
  };
}
