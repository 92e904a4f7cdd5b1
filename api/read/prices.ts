/**
 * The current state of each vault from `metrics_vault_current` (views/settle.ts writes it from
 * the `vault_price_current` and `vault_holders` views): its share price, the latest accountant
 * rate on the primary chain when that chain has one, else the latest rate on any chain
 * (docs/architecture.md#units-and-formulas: `tokenPrice` is the accountant rate,
 * decimal-adjusted, in the base asset), and its holder count.
 */
import type { Store } from '../../store/client.ts';

export interface VaultPrice {
  vault: string;
  chainId: number;
  /** Rate in base-asset raw units (exact). */
  rateRaw: bigint;
  rateDecimals: number;
  /** Unix seconds of the block that set the rate. */
  updatedAt: number;
}

export interface VaultCurrent {
  /** Undefined while the vault has no rate. */
  price: VaultPrice | undefined;
  /** Distinct addresses with a positive balance on any chain. */
  holders: number;
}

interface Row {
  vault: string;
  has_price: number;
  chain_id: number;
  rate: string;
  rate_decimals: number;
  updated_at: string;
  holders: string;
}

/** vault slug -> its current price and holder count, for the vaults of `slugs`. */
export async function currentState(
  store: Store,
  slugs: readonly string[],
): Promise<Map<string, VaultCurrent>> {
  const rows = await store.query<Row>(
    `SELECT vault, has_price, chain_id, toString(rate_raw) AS rate, rate_decimals,
       toString(toUnixTimestamp(updated_at)) AS updated_at, toString(holders) AS holders
     FROM ${store.database}.metrics_vault_current FINAL WHERE vault IN {slugs:Array(String)}`,
    { slugs },
  );
  return new Map(
    rows.map((r) => [
      r.vault,
      {
        price:
          Number(r.has_price) === 1
            ? {
                vault: r.vault,
                chainId: Number(r.chain_id),
                rateRaw: BigInt(r.rate),
                rateDecimals: Number(r.rate_decimals),
                updatedAt: Number(r.updated_at),
              }
            : undefined,
        holders: Number(r.holders),
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
