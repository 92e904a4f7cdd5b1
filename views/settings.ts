/**
 * Writes `service_settings` (migration 019), the settings the views read: the primary chain,
 * whose accountant rate is a vault's price when it has one (`vault_price_current`). The streams
 * role writes it from its config after the migrations, before it settles the metrics.
 */
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
