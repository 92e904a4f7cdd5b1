/**
 * The current share price of each vault: the latest accountant rate on the primary
 * chain (98866) when that chain has one, else the latest rate on any chain (`vault_price_current`;
 * docs/architecture.md#units-and-formulas: `tokenPrice` is the accountant rate, decimal-adjusted, in the base asset).
 */
import type { Store } from '../../store/client.ts';

export const PRIMARY_CHAIN_ID = 98866;

export interface VaultPrice {
  vault: string;
  chainId: number;
  /** Rate in base-asset raw units (exact). */
  rateRaw: bigint;
  rateDecimals: number;
  /** Unix seconds of the block that set the rate. */
  updatedAt: number;
  isPaused: boolean;
}

interface Row {
  vault: string;
  chain_id: number;
  rate: string;
  rate_decimals: number;
  updated_at: string;
  is_paused: number;
}

/**
 * Per vault: its primary-chain rate when there is one, else its most recently updated
 * rate (the `vault_price_current` view, which also fixes the vault's price chain).
 */
export async function currentPrices(store: Store): Promise<Map<string, VaultPrice>> {
  const rows = await store.query<Row>(
    `SELECT vault, chain_id, toString(rate_raw) AS rate, rate_decimals,
       toString(toUnixTimestamp(updated_at)) AS updated_at, is_paused
     FROM ${store.database}.vault_price_current`,
  );
  return new Map(
    rows.map((r) => [
      r.vault,
      {
        vault: r.vault,
        chainId: Number(r.chain_id),
        rateRaw: BigInt(r.rate),
        rateDecimals: Number(r.rate_decimals),
        updatedAt: Number(r.updated_at),
        isPaused: Number(r.is_paused) === 1,
      },
    ]),
  );
}

/** `raw / 10^decimals` as a JS number for output (exact until this point). */
export function toUnits(raw: bigint, decimals: number): number {
  if (decimals === 0) return Number(raw);
  const neg = raw < 0n;
  const abs = neg ? -raw : raw;
  const s = abs.toString().padStart(decimals + 1, '0');
  const n = Number(`${s.slice(0, -decimals)}.${s.slice(-decimals)}`);
  return neg ? -n : n;
}
