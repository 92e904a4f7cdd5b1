/**
 * Maps a validated event record to the row of its raw table. EVM addresses and
 * hashes are lower-cased (Solana base58 is case-sensitive and kept as is), so the
 * same account always has the same key.
 */
import type { FamilyName } from '../schemas/families.ts';
import type * as R from '../schemas/records.ts';

export type Row = Record<string, unknown>;

// Only EVM hex is case-insensitive; charCode checks avoid a string allocation per field.
const UPPER_HEX = /[A-F]/;
const norm = (s: string) =>
  s.charCodeAt(0) === 48 && s.charCodeAt(1) === 120 && UPPER_HEX.test(s) ? s.toLowerCase() : s;
const iso = (ms: number) => new Date(ms).toISOString();
const DATETIME_MAX = 4_294_967_295;
/**
 * Unix seconds for a `DateTime` column in TabSeparated. The store parses dates with
 * `best_effort`, which reads a short number as something else entirely ("1" as a date in
 * the current year, "0" and "86400" not at all): ten zero-padded digits are always read as
 * Unix seconds. Values past the type's end (a uint64 "no deadline") are its last second.
 */
export function unixTime(seconds: number): string | number {
  if (seconds >= 1_000_000_000) return Math.min(seconds, DATETIME_MAX);
  return String(Math.max(0, seconds)).padStart(10, '0');
}
const orNull = (s: string) => (s === '' ? null : s);

const idOf = (chainId: number, blockHash: string, logIndex: number) => `${chainId}:${blockHash}:${logIndex}`;

/** Natural identity of a chain event. */
export function eventId(r: { chainId: number; blockHash: string; logIndex: number }): string {
  return idOf(r.chainId, norm(r.blockHash), r.logIndex);
}

/**
 * The columns every chain event's row starts with. Callers add their family's columns to it in
 * place: a `{ ...chainCols(r), ... }` copy per event cost ~10x as much (bench: toRow was 5% of the CPU).
 */
function chainCols(
  r:
    | R.TransferRecord
    | R.ActivityRecord
    | R.RateRecord
    | R.FeeRecord
    | R.RedemptionRecord
    | R.RoleRecord
    | R.OperatorRecord
    | R.FeeRateRecord,
): Row {
  const blockHash = norm(r.blockHash);
  return {
    event_id: idOf(r.chainId, blockHash, r.logIndex),
    chain_id: r.chainId,
    block_number: r.blockNumber,
    block_hash: blockHash,
    block_time: unixTime(r.blockTimestamp),
    tx_hash: norm(r.txHash),
    log_index: r.logIndex,
    removed: r.removed ? 1 : 0,
    vault: r.vault,
  };
}

/** Scales a decimal string to an integer of 10^-scale units, exactly (truncating extra digits). */
export function scaleDecimal(s: string, scale: number): bigint {
  const neg = s.startsWith('-');
  const [int, frac = ''] = (neg ? s.slice(1) : s).split('.');
  const v = BigInt(int + frac.padEnd(scale, '0').slice(0, scale));
  return neg ? -v : v;
}

/** Exact USD value of `amount` raw units at `usdPrice`, in 1e-18 USD. */
export function usdE18(amount: string, decimals: number, usdPrice: string): bigint {
  return (BigInt(amount) * scaleDecimal(usdPrice, 18)) / 10n ** BigInt(decimals);
}

export const TABLES: Record<FamilyName, string> = {
  registry: 'registry_raw',
  blocks: 'blocks_raw',
  transfers: 'transfers_raw',
  activity: 'activity_raw',
  rates: 'rates_raw',
  fees: 'fees_raw',
  redemptions: 'redemptions_raw',
  roles: 'roles_raw',
  operators: 'operators_raw',
  fee_rates: 'fee_rates_raw',
  snapshots: 'snapshots_raw',
  mint_steps: 'mint_steps_raw',
  source_errors: 'source_errors_raw',
  dlq: 'dead_letters',
};

/** The raw-table row for a record (without `ver`, which the writer assigns). */
export function toRow(family: FamilyName, rec: any): Row {
  switch (family) {
    case 'registry': {
      const r = rec as R.RegistryRecord;
      return {
        slug: r.slug,
        status: r.status,
        updated_at: iso(r.updatedAt),
        vault_address: norm(r.vaultAddress),
        name: r.name,
        symbol: r.symbol,
        decimals: r.decimals,
        chain_ids: r.chainIds,
        solana_mint: r.solanaMint,
        base_asset_usd_price: r.baseAssetUsdPrice,
        base_asset_decimals: r.baseAssetDecimals,
        info: r.info,
      };
    }
    case 'blocks': {
      const r = rec as R.BlockRecord;
      return {
        chain_id: r.chainId,
        block_number: r.blockNumber,
        block_hash: norm(r.blockHash),
        parent_hash: norm(r.parentHash),
        block_time: unixTime(r.blockTimestamp),
        removed: r.removed ? 1 : 0,
      };
    }
    case 'transfers': {
      const r = rec as R.TransferRecord;
      const row = chainCols(r);
      row.token = norm(r.token);
      row.from_address = norm(r.from);
      row.to_address = norm(r.to);
      row.amount = r.amount;
      return row;
    }
    case 'activity': {
      const r = rec as R.ActivityRecord;
      const row = chainCols(r);
      row.kind = r.kind;
      row.user = norm(r.user);
      row.shares = r.shares;
      row.shares_token = norm(r.sharesToken);
      row.assets = r.assets;
      row.assets_token = norm(r.assetsToken);
      row.assets_decimals = r.assetsDecimals;
      return row;
    }
    case 'rates': {
      const r = rec as R.RateRecord;
      const row = chainCols(r);
      row.accountant = norm(r.accountant);
      row.rate = r.rate;
      row.rate_decimals = r.rateDecimals;
      row.source = r.source;
      row.is_paused = r.isPaused ? 1 : 0;
      return row;
    }
    case 'fees': {
      const r = rec as R.FeeRecord;
      const row = chainCols(r);
      row.kind = r.kind;
      row.token = norm(r.token);
      row.amount = r.amount;
      row.decimals = r.decimals;
      row.usd_price = r.usdPrice;
      row.usd_e18 = usdE18(r.amount, r.decimals, r.usdPrice).toString();
      return row;
    }
    case 'redemptions': {
      const r = rec as R.RedemptionRecord;
      const row = chainCols(r);
      row.queue = norm(r.queue);
      row.kind = r.kind;
      row.request_id = norm(r.requestId);
      row.user = norm(r.user);
      row.offer_token = norm(r.offerToken);
      row.want_token = norm(r.wantToken);
      row.amount = r.amount;
      row.min_price = r.minPrice;
      row.want_decimals = r.wantDecimals;
      row.deadline = unixTime(r.deadline);
      return row;
    }
    case 'roles': {
      const r = rec as R.RoleRecord;
      const row = chainCols(r);
      row.authority = norm(r.authority);
      row.user = norm(r.user);
      row.role = r.role;
      row.enabled = r.enabled ? 1 : 0;
      return row;
    }
    case 'operators': {
      const r = rec as R.OperatorRecord;
      const row = chainCols(r);
      row.contract = norm(r.contract);
      row.source = r.source;
      row.controller = norm(r.controller);
      row.operator = norm(r.operator);
      row.approved = r.approved ? 1 : 0;
      return row;
    }
    case 'fee_rates': {
      const r = rec as R.FeeRateRecord;
      const row = chainCols(r);
      row.contract = norm(r.contract);
      row.event = r.event;
      row.kind = r.kind;
      row.old_rate = r.oldRate;
      row.new_rate = r.newRate;
      row.rate_scale = r.rateScale;
      row.old_flat = r.oldFlat;
      row.new_flat = r.newFlat;
      return row;
    }
    case 'snapshots': {
      const r = rec as R.SnapshotRecord;
      return {
        vault: r.vault,
        chain_id: r.chainId,
        block_number: r.blockNumber,
        ts: unixTime(r.timestamp),
        kind: r.kind,
        token: norm(r.token),
        amount: r.amount,
        decimals: r.decimals,
        usd_price: orNull(r.usdPrice),
        apy7d: orNull(r.apy7d),
        apy30d: orNull(r.apy30d),
        weight: orNull(r.weight),
        is_paused: r.isPaused ? 1 : 0,
      };
    }
    case 'mint_steps': {
      const r = rec as R.MintStepRecord;
      return {
        signature: r.signature,
        step: r.step,
        status: r.status,
        observed_at: iso(r.observedAt),
        fields: r.fields,
        error: r.error,
      };
    }
    case 'source_errors': {
      const r = rec as R.SourceErrorRecord;
      return {
        vault: r.vault,
        chain_id: r.chainId,
        source: r.source,
        operation: r.operation,
        message: r.message,
        code: r.code,
        ts: unixTime(r.timestamp),
      };
    }
    case 'dlq': {
      const r = rec as R.DeadLetterRecord;
      return {
        topic: r.topic,
        partition: r.partition,
        offset: r.offset,
        key: r.key,
        reason: r.reason,
        payload: r.payload.toString('base64'),
        at: iso(r.at),
      };
    }
  }
}

/** Families whose raw table carries `ver`/`removed` and an `event_id`. */
export const VERSIONED: ReadonlySet<FamilyName> = new Set([
  'blocks',
  'transfers',
  'activity',
  'rates',
  'fees',
  'redemptions',
  'roles',
  'operators',
  'fee_rates',
]);
/** Families whose incremental views sum deltas: each state change must be inserted exactly once. */
export const STATE_CHECKED: ReadonlySet<FamilyName> = new Set(['transfers', 'fees']);
