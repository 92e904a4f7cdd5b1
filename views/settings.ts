/**
 * Writes the tables the service fills from its config for the views and the data team: the
 * primary chain (`service_settings`, migration 019), whose accountant rate is a vault's price
 * when it has one (`vault_price_current`), and the configured chains' names (`chains`, migration
 * 022). The streams role writes them from its config after the migrations, before it settles
 * the metrics; rows that already hold the configured values are not written again.
 */
import type { Config } from '../core/config.ts';
import { SOLANA_CHAIN_ID } from '../schemas/families.ts';
import type { Store } from '../store/client.ts';

export async function writeServiceSettings(
  store: Store,
  settings: { primaryChainId: number },
): Promise<void> {
  const [row] = await store.query<{ primary: number }>(
    `SELECT primary_chain_id AS primary FROM ${store.database}.service_settings FINAL WHERE id = 0`,
  );
  if (row && Number(row.primary) === settings.primaryChainId) return;
  await store.command(
    `INSERT INTO ${store.database}.service_settings (id, primary_chain_id, updated_at)
     VALUES (0, ${Math.trunc(settings.primaryChainId)}, now64(3, 'UTC'))`,
  );
}

export interface ChainName {
  chainId: number;
  name: string;
}

/** The chains of a config: `chains[]`, and Solana (101) when a vault has a Solana mint. */
export function configuredChains(cfg: Pick<Config, 'chains' | 'vaults'>): ChainName[] {
  const out = cfg.chains.map((c) => ({ chainId: c.chainId, name: c.name }));
  if (cfg.vaults.some((v) => v.solana) && !out.some((c) => c.chainId === SOLANA_CHAIN_ID))
    out.push({ chainId: SOLANA_CHAIN_ID, name: 'Solana' });
  return out;
}

/** Writes the chains whose row is missing or names them otherwise (a rename replaces the row). */
export async function writeChains(store: Store, chains: readonly ChainName[]): Promise<void> {
  const rows = await store.query<{ chain_id: number; name: string }>(
    `SELECT chain_id, name FROM ${store.database}.chains FINAL`,
  );
  const have = new Map(rows.map((r) => [Number(r.chain_id), r.name]));
  const changed = chains.filter((c) => have.get(c.chainId) !== c.name);
  if (!changed.length) return;
  const [{ now }] = await store.query<{ now: string }>(`SELECT toString(now64(3, 'UTC')) AS now`);
  await store.insert(
    'chains',
    changed.map((c) => ({ chain_id: c.chainId, name: c.name, updated_at: now })),
  );
}

/** Everything this file writes, from a config. */
export async function writeConfigTables(
  store: Store,
  cfg: Pick<Config, 'chains' | 'vaults' | 'mintFlow'>,
): Promise<void> {
  await writeServiceSettings(store, { primaryChainId: cfg.mintFlow.primaryChainId });
  await writeChains(store, configuredChains(cfg));
}
