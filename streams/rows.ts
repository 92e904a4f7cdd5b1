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
const orNull = (s: string) => (s === '' ? null : s);

/** Natural identity of a chain event. */
export function eventId(r: { chainId: number; blockHash: string; logIndex: number }): string {
  return `${r.chainId}:${norm(r.blockHash)}:${r.logIndex}`;
}

function chainCols(
  r: R.TransferRecord | R.ActivityRecord | R.RateRecord | R.FeeRecord | R.RedemptionRecord | R.RoleRecord,
) {
  return {
    event_id: eventId(r),
    chain_id: r.chainId,
    block_number: r.blockNumber,
    block_hash: norm(r.blockHash),
    block_time: r.blockTimestamp,
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
        block_time: r.blockTimestamp,
        removed: r.removed ? 1 : 0,
      };
    }
    case 'transfers': {
      const r = rec as R.TransferRecord;
      return {
        ...chainCols(r),
        token: norm(r.token),
        from_address: norm(r.from),
        to_address: norm(r.to),
        amount: r.amount,
      };
    }
    case 'activity': {
      const r = rec as R.ActivityRecord;
      return {
        ...chainCols(r),
        kind: r.kind,
        user: norm(r.user),
        shares: r.shares,
        shares_token: norm(r.sharesToken),
        assets: r.assets,
        assets_token: norm(r.assetsToken),
        assets_decimals: r.assetsDecimals,
      };
    }
    case 'rates': {
      const r = rec as R.RateRecord;
      return {
        ...chainCols(r),
        accountant: norm(r.accountant),
        rate: r.rate,
        rate_decimals: r.rateDecimals,
        source: r.source,
        is_paused: r.isPaused ? 1 : 0,
      };
    }
    case 'fees': {
      const r = rec as R.FeeRecord;
      return {
        ...chainCols(r),
        kind: r.kind,
        token: norm(r.token),
        amount: r.amount,
        decimals: r.decimals,
        usd_price: r.usdPrice,
        usd_e18: usdE18(r.amount, r.decimals, r.usdPrice).toString(),
      };
    }
    case 'redemptions': {
      const r = rec as R.RedemptionRecord;
      return {
        ...chainCols(r),
        queue: norm(r.queue),
        kind: r.kind,
        request_id: norm(r.requestId),
        user: norm(r.user),
        offer_token: norm(r.offerToken),
        want_token: norm(r.wantToken),
        amount: r.amount,
        min_price: r.minPrice,
        want_decimals: r.wantDecimals,
        deadline: r.deadline,
      };
    }
    case 'roles': {
      const r = rec as R.RoleRecord;
      return {
        ...chainCols(r),
        authority: norm(r.authority),
        user: norm(r.user),
        role: r.role,
        enabled: r.enabled ? 1 : 0,
      };
    }
    case 'snapshots': {
      const r = rec as R.SnapshotRecord;
      return {
        vault: r.vault,
        chain_id: r.chainId,
        block_number: r.blockNumber,
        ts: r.timestamp,
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
        ts: r.timestamp,
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
]);
/** Families whose incremental views sum deltas: each state change must be inserted exactly once. */
export const STATE_CHECKED: ReadonlySet<FamilyName> = new Set(['transfers', 'fees']);
