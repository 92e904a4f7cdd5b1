/** Pipeline state for `/status` and `vaultstream status`. */
import type { Bus } from '../bus/types.ts';
import type { Store } from '../store/client.ts';

export interface PipelineStatus {
  store: { kind: string; database: string; migrations: string[] };
  chains: { chainId: number; blockNumber: number; blockTime: string; lagSeconds: number }[];
  /** `lag` per topic, in `lagUnit`: Kafka counts messages, the in-process log bytes. */
  consumer: { groupId: string; lag: Record<string, number>; lagUnit: 'messages' | 'bytes' } | null;
  rows: Record<string, number>;
  /**
   * The metrics tables (views/settle.ts): `settled` once the settle has seen every raw row stored
   * so far (the API's daily metrics then answer for them).
   */
  metrics: { settledThrough: string; newestRow: string; settled: boolean } | null;
}

export async function pipelineStatus(
  store: Store,
  bus?: { bus: Bus; groupId: string; topics: string[] },
  now = Date.now(),
): Promise<PipelineStatus> {
  const db = store.database;
  const migrations = (
    await store.query<{ name: string }>(`SELECT name FROM ${db}.schema_migrations FINAL ORDER BY version`)
  ).map((r) => r.name);
  const chains = (
    await store.query<{ chain_id: number; block_number: string; block_time: string }>(
      `SELECT chain_id, block_number, toString(block_time) AS block_time FROM ${db}.chain_watermarks ORDER BY chain_id`,
    )
  ).map((r) => ({
    chainId: Number(r.chain_id),
    blockNumber: Number(r.block_number),
    blockTime: `${r.block_time.replace(' ', 'T')}Z`,
    lagSeconds: Math.max(0, Math.round((now - Date.parse(`${r.block_time.replace(' ', 'T')}Z`)) / 1000)),
  }));
  const rows = Object.fromEntries(
    (
      await store.query<{ name: string; rows: string }>(
        `SELECT name, toString(total_rows) AS rows FROM system.tables WHERE database = {db:String} AND name LIKE '%_raw' ORDER BY name`,
        { db },
      )
    ).map((r) => [r.name, Number(r.rows)]),
  );
  let consumer: PipelineStatus['consumer'] = null;
  if (bus) {
    const lag = await bus.bus.lag(bus.groupId, bus.topics);
    consumer = {
      groupId: bus.groupId,
      lag: Object.fromEntries(Object.entries(lag).map(([t, parts]) => [t, parts.reduce((a, b) => a + b, 0)])),
      lagUnit: bus.bus.lagUnit,
    };
  }
  return {
    store: { kind: store.kind, database: db, migrations },
    chains,
    consumer,
    rows,
    metrics: await metricsStatus(store),
  };
}

/** How far the settle of the metrics tables is: the newest settled ingestion time against the newest stored raw row. */
async function metricsStatus(store: Store): Promise<PipelineStatus['metrics']> {
  const db = store.database;
  const newest = (t: string) => `(SELECT max(ingested_at) FROM ${db}.${t})`;
  try {
    const [r] = await store.query<{ since: string; newest: string }>(
      `SELECT toString((SELECT max(since) FROM ${db}.metrics_settle_state)) AS since,
         toString(greatest(${['rates_raw', 'transfers_raw', 'redemptions_raw', 'snapshots_raw', 'registry_raw'].map(newest).join(', ')})) AS newest`,
    );
    return { settledThrough: r.since, newestRow: r.newest, settled: r.newest <= r.since };
  } catch {
    return null; // before the migrations
  }
}
