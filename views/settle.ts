/**
 * The settle step (docs/architecture.md#precomputed-metrics): writes the metrics tables of
 * migrations 018, 021 and 024 from the plain views that define them, for the vaults and days whose inputs
 * changed since the last settle, so the API reads short rows instead of views over the whole
 * history.
 *
 * Which rows: a raw row ingested since the last settle (rates, transfers, redemptions,
 * snapshots) changes its vault from the UTC day of its block time (or snapshot time) on: closes,
 * supply and snapshots carry forward and the APYs and tvl30DayChange look back 7 and 30 days, so
 * every later day is recomputed. A registry change recomputes the whole vault, and a change of
 * `service_settings` (the primary chain) every vault. A new UTC day
 * recomputes every vault from the last settled day (the grids end at today), and a new UTC hour
 * the holder counts from the day of the last settled hour (today's row gains a sample). Retractions and
 * replays are raw rows like any other, so they are covered; a restart resumes from
 * `metrics_settle_state`, and without it everything is recomputed.
 *
 * How: one INSERT ... SELECT per table, with the views' rows at version v + 1 and, for every row
 * stored in the recomputed range, a tombstone at version v: ReplacingMergeTree(version, deleted)
 * keeps the new row where the views still produce one and hides the others. The rows are the
 * views' own, so the tables answer exactly what the views answer at the settle's clock.
 */
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';

/**
 * On a ClickHouse server, rows ingested this long before the last settle are scanned again: a
 * concurrent insert takes its `ingested_at` before it commits. chDB runs one statement at a time
 * in this process, so an insert is visible before the next settle reads.
 */
const RESCAN_MS = 10_000;

/**
 * What made a vault's rows dirty: a raw family ingested since the last settle, a new UTC day, or a
 * new UTC hour (only the holder counts, sampled hourly, read it).
 */
type Input = 'rates' | 'transfers' | 'redemptions' | 'snapshots' | 'registry' | 'day' | 'hour';
const ALL: Input[] = ['rates', 'transfers', 'redemptions', 'snapshots', 'registry', 'day'];
/** The inputs of the composition views (composition_daily, composition_apy_daily). */
const COMPOSITION: Input[] = ['snapshots', 'registry', 'day'];

/**
 * A filter on `vault` (and `day` from each vault's first dirty day) for the vaults with one of
 * `inputs` dirty; null when there is none.
 */
type Filter = (inputs: Input[], day?: string) => string | null;

/** One settled table: its columns and the query of the views that produces its dirty rows. */
interface Target {
  table: string;
  /** Key and value columns, in the table's order, without version and deleted. */
  columns: string[];
  /** The raw inputs its views read: the vaults to recompute are those with one of them dirty. */
  inputs: Input[];
  /** SELECT of `columns` (in order) for the rows `f(this.inputs)` selects. */
  select(db: string, f: Filter): string;
  /** Column holding the UTC day, when the table is daily. */
  day?: string;
}

const TARGETS: Target[] = [
  {
    table: 'metrics_chain_daily',
    columns: ['vault', 'chain_id', 'day', 'price_e18', 'rolling7d', 'rolling30d', 'sec30d'],
    inputs: ['rates', 'registry', 'day'],
    select: (db, f) =>
      `SELECT vault, chain_id, day, price_e18, rolling7d, rolling30d, sec30d FROM ${db}.nav_apy_daily
       WHERE ${f(['rates', 'registry', 'day'], 'day')}`,
    day: 'day',
  },
  {
    table: 'metrics_vault_daily',
    columns: [
      'vault',
      'day',
      'price_day',
      'tvl_usd_e18',
      'tvl_30d_change_pct',
      'liquid_funds_usd_e18',
      'liquid_funds_range_pct',
      'composition_day',
      'composition_rolling7d',
      'composition_rolling30d',
      'composition_sec30d',
    ],
    inputs: ALL,
    // The union of the days of the three views, each view's columns where it has the day. The
    // composition views (most of a settle's time: their planning) are read only for the vaults
    // whose composition inputs changed; the others keep the stored compositionApy.
    select: (db, f) => {
      const all = f(ALL, 'day') as string;
      const comp = f(COMPOSITION, 'day');
      const kept = comp ? `(${all}) AND NOT (${comp})` : all;
      return `SELECT vault, day, max(price_day) AS price_day,
        sum(tvl) AS tvl_usd_e18, sum(change) AS tvl_30d_change_pct, sum(liquid) AS liquid_funds_usd_e18,
        sum(range) AS liquid_funds_range_pct, max(comp_day) AS composition_day,
        anyIf(r7, comp_day = 1) AS composition_rolling7d, anyIf(r30, comp_day = 1) AS composition_rolling30d,
        anyIf(sec, comp_day = 1) AS composition_sec30d
      FROM (
        SELECT vault, day, toUInt8(1) AS price_day, toInt256(0) AS tvl, 0 AS change, toInt256(0) AS liquid, 0 AS range,
          toUInt8(0) AS comp_day, CAST(NULL, 'Nullable(Float64)') AS r7, CAST(NULL, 'Nullable(Float64)') AS r30,
          CAST(NULL, 'Nullable(Float64)') AS sec
        FROM ${db}.vault_price_daily WHERE ${all}
        UNION ALL
        SELECT vault, day, 0, tvl_usd_e18, tvl_30d_change_pct, liquid_funds_usd_e18, liquid_funds_range_pct, 0, NULL, NULL, NULL
        FROM ${db}.vault_liquidity_daily WHERE ${all}
        UNION ALL
        SELECT toString(vault), day, 0, toInt256(0), 0, toInt256(0), 0, 1, composition_rolling7d,
          composition_rolling30d, composition_sec30d
        FROM ${db}.metrics_vault_daily FINAL WHERE composition_day = 1 AND ${kept}
        ${
          comp
            ? `UNION ALL
        SELECT vault, day, 0, toInt256(0), 0, toInt256(0), 0, 1, rolling7d, rolling30d, sec30d
        FROM ${db}.composition_apy_daily WHERE ${comp}`
            : ''
        }
      ) GROUP BY vault, day`;
    },
    day: 'day',
  },
  {
    table: 'metrics_assets_daily',
    columns: ['vault', 'day', 'position', 'slug', 'usd_price_e18', 'apy7d_e18', 'apy30d_e18', 'weight_e18'],
    inputs: COMPOSITION,
    select: (db, f) =>
      `SELECT vault, day, position, slug, usd_price_e18, apy7d_e18, apy30d_e18, weight_e18 FROM ${db}.composition_daily
       WHERE ${f(COMPOSITION, 'day')}`,
    day: 'day',
  },
  {
    table: 'metrics_vault_current',
    columns: ['vault', 'has_price', 'chain_id', 'rate_raw', 'rate_decimals', 'updated_at', 'holders'],
    inputs: ['rates', 'transfers', 'registry'],
    select: (db, f) => {
      const w = f(['rates', 'transfers', 'registry']);
      return `SELECT vault, max(has_price) AS has_price, max(chain_id) AS chain_id, max(rate_raw) AS rate_raw,
        max(rate_decimals) AS rate_decimals, max(updated_at) AS updated_at, max(holders) AS holders
      FROM (
        SELECT vault, toUInt8(1) AS has_price, chain_id, rate_raw, rate_decimals, updated_at, toUInt64(0) AS holders
        FROM ${db}.vault_price_current WHERE ${w}
        UNION ALL
        SELECT toString(vault), 0, 0, toUInt256(0), 0, toDateTime(0, 'UTC'), holders FROM ${db}.vault_holders WHERE ${w}
      ) GROUP BY vault`;
    },
  },
  {
    table: 'metrics_holders_daily',
    columns: ['vault', 'chain_id', 'day', 'start', 'end', 'min', 'max', 'average', 'count'],
    inputs: ['transfers', 'day', 'hour'],
    select: (db, f) =>
      `SELECT vault, chain_id, day, start, end, min, max, average, count FROM ${db}.holder_history_daily
       WHERE ${f(['transfers', 'day', 'hour'], 'day')}`,
    day: 'day',
  },
  {
    table: 'metrics_top_holders',
    columns: ['vault', 'chain_id', 'holder', 'balance_raw', 'share_decimals', 'balance_e36', 'since'],
    inputs: ['transfers', 'registry', 'rates'],
    select: (db, f) =>
      `SELECT vault, chain_id, holder, balance_raw, share_decimals, balance_e36, since FROM ${db}.vault_top_holders
       WHERE ${f(['transfers', 'registry', 'rates'])}`,
  },
  {
    table: 'metrics_pending_redemptions',
    columns: [
      'vault',
      'chain_id',
      'queue',
      'request_id',
      'deadline',
      'shares_raw',
      'share_decimals',
      'share_usd_e18',
    ],
    inputs: ['redemptions', 'rates', 'registry'],
    select: (db, f) =>
      `SELECT vault, chain_id, queue, request_id, deadline, shares_raw, share_decimals, share_usd_e18
       FROM ${db}.pending_redemptions WHERE ${f(['redemptions', 'rates', 'registry'])}`,
  },
];

export interface SettleResult {
  /** Vault -> first UTC day recomputed ('1970-01-01' for the whole history). */
  settled: Map<string, string>;
  /** Version of the rows written (0 when nothing was dirty). */
  version: bigint;
}

interface State {
  since: string;
  settledDay: string;
  settledHour: string;
  version: bigint;
}

/** Vault -> input -> first dirty UTC day (YYYY-MM-DD). */
type Dirty = Map<string, Map<Input, string>>;

const quote = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

async function readState(store: Store): Promise<State> {
  const [r] = await store.query<{ since: string; day: string; hour: string; version: string }>(
    `SELECT toString(since) AS since, toString(settled_day) AS day, toString(settled_hour) AS hour,
       toString(version) AS version
     FROM ${store.database}.metrics_settle_state FINAL WHERE id = 0`,
  );
  return r
    ? { since: r.since, settledDay: r.day, settledHour: r.hour, version: BigInt(r.version) }
    : {
        since: '1970-01-01 00:00:00.000',
        settledDay: '1970-01-01',
        settledHour: '1970-01-01 00:00:00',
        version: 0n,
      };
}

const mark = (dirty: Dirty, vault: string, input: Input, day: string) => {
  const m = dirty.get(vault) ?? new Map<Input, string>();
  dirty.set(vault, m);
  const d = m.get(input);
  if (d === undefined || day < d) m.set(input, day);
};

/**
 * The vaults, inputs and first UTC days of the raw rows ingested after `since` (minus the
 * rescan margin on a server), and the newest `ingested_at` seen (the next `since`).
 */
async function dirtyVaults(store: Store, since: string): Promise<{ dirty: Dirty; seen: string }> {
  const db = store.database;
  const margin = store.kind === 'chdb' ? 0 : RESCAN_MS;
  const after = `ingested_at > toDateTime64(${quote(since)}, 3, 'UTC') - toIntervalMillisecond(${margin})`;
  const changed = (input: Input, table: string, vault: string, time: string) =>
    `SELECT '${input}' AS input, toString(${vault}) AS vault, toString(min(toDate(${time}))) AS d,
       toString(max(ingested_at)) AS t FROM ${db}.${table} WHERE ${after} GROUP BY vault`;
  const rows = await store.query<{ input: Input; vault: string; d: string; t: string; now: string }>(
    `SELECT input, vault, d, t, toString(now64(3, 'UTC') - toIntervalMillisecond(1)) AS now FROM (
       ${changed('rates', 'rates_raw', 'vault', 'block_time')}
       UNION ALL ${changed('transfers', 'transfers_raw', 'vault', 'block_time')}
       UNION ALL ${changed('redemptions', 'redemptions_raw', 'vault', 'block_time')}
       UNION ALL ${changed('snapshots', 'snapshots_raw', 'vault', 'ts')}
       UNION ALL ${changed('registry', 'registry_raw', 'slug', 'toDateTime(0)')}
       UNION ALL SELECT 'registry', toString(slug), '1970-01-01', toString(t)
         FROM (SELECT slug FROM ${db}.registry_raw GROUP BY slug) AS r
         CROSS JOIN (SELECT max(updated_at) AS t FROM ${db}.service_settings) AS s
         WHERE ${after.replace('ingested_at', 's.t')}
     )`,
  );
  const dirty: Dirty = new Map();
  for (const r of rows) mark(dirty, r.vault, r.input, r.d);
  // The newest row seen, but never this millisecond: a later insert may still take it.
  // (ISO-like strings: their order is the time order.)
  let seen = since;
  for (const r of rows) {
    const t = [r.t, r.now].sort()[0];
    if (t > seen) seen = t;
  }
  return { dirty, seen };
}

/** The Filter over `dirty`: per vault, from its first day dirty for one of the inputs. */
function filterOf(dirty: Dirty): Filter {
  return (inputs, day) => {
    const from = new Map<string, string>();
    for (const [vault, m] of dirty)
      for (const i of inputs) {
        const d = m.get(i);
        const f = from.get(vault);
        if (d !== undefined && (f === undefined || d < f)) from.set(vault, d);
      }
    if (!from.size) return null;
    const list = `[${[...from.keys()].map(quote).join(', ')}]`;
    if (!day) return `vault IN ${list}`;
    const froms = `[${[...from.values()].map((d) => `toDate(${quote(d)})`).join(', ')}]`;
    return `vault IN ${list} AND ${day} >= ${froms}[indexOf(${list}, vault)]`;
  };
}

/** Recomputes the metrics rows the changes since the last settle affect; returns what it settled. */
export async function settleMetrics(store: Store): Promise<SettleResult> {
  const db = store.database;
  const state = await readState(store);
  const [clock] = await store.query<{ today: string; hour: string }>(
    `SELECT toString(today()) AS today, toString(toStartOfHour(now('UTC'))) AS hour`,
  );
  const { dirty, seen } = await dirtyVaults(store, state.since);
  const newDay = clock.today > state.settledDay;
  const newHour = clock.hour > state.settledHour;
  if (newDay || newHour) {
    const vaults = await store.query<{ slug: string }>(`SELECT slug FROM ${db}.vault_registry`);
    for (const { slug } of vaults) {
      // A new UTC day: every vault's grid gains it, and the last settled day closes.
      if (newDay) mark(dirty, slug, 'day', state.settledDay);
      // A new UTC hour: the holder counts of the days since the last settled hour gain samples.
      if (newHour) mark(dirty, slug, 'hour', state.settledHour.slice(0, 10));
    }
  }
  let version = 0n;
  if (dirty.size) {
    const now = BigInt(Date.now()) * 1000n;
    version = now > state.version + 2n ? now : state.version + 2n;
    const f = filterOf(dirty);
    for (const t of TARGETS) {
      const filter = f(t.inputs, t.day);
      if (!filter) continue;
      const cols = t.columns.join(', ');
      // At the engine's background priority (chDB: after every waiting consumer and API query),
      // so the settle never delays an insert or an answer on a live chain.
      await store.queryRaw(
        `INSERT INTO ${db}.${t.table} (${cols}, version, deleted)
         SELECT ${cols}, toUInt64(${version + 1n}), toUInt8(0) FROM (${t.select(db, f)})
         UNION ALL
         SELECT ${cols}, toUInt64(${version}), toUInt8(1) FROM ${db}.${t.table} FINAL WHERE ${filter}`,
        { background: true },
      );
    }
  }
  if (dirty.size || clock.today !== state.settledDay || clock.hour !== state.settledHour)
    await store.insert('metrics_settle_state', [
      {
        id: 0,
        since: seen,
        settled_day: clock.today,
        settled_hour: clock.hour,
        version: String(version || state.version),
      },
    ]);
  const settled = new Map([...dirty].map(([v, m]) => [v, [...m.values()].sort()[0]]));
  return { settled, version };
}

/**
 * Runs `settleMetrics` in a loop, `intervalMs` apart, one at a time; `version` counts the settles
 * that wrote rows (part of the API's data version, so an answer cached before a settle is not
 * served after it).
 */
export class Settler {
  version = 0;
  private running: Promise<SettleResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly opts: { intervalMs: number; log?: Logger },
  ) {}

  /** Settles now (joining a settle in flight, then running one more so nothing landed before the call is missed). */
  async settleNow(): Promise<SettleResult> {
    if (this.running) await this.running.catch(() => undefined);
    this.running ??= (async () => {
      const t0 = performance.now();
      const r = await settleMetrics(this.store);
      if (r.settled.size) {
        this.version++;
        this.opts.log?.debug(
          { vaults: r.settled.size, ms: Math.round(performance.now() - t0) },
          'metrics settled',
        );
      }
      return r;
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  start(): void {
    const loop = async () => {
      if (this.stopped) return;
      try {
        await this.settleNow();
      } catch (err) {
        this.opts.log?.warn({ err: String(err) }, 'metrics settle failed; retried next interval');
      }
      if (!this.stopped) this.timer = setTimeout(loop, this.opts.intervalMs);
    };
    void loop();
  }

  /** Stops the loop after the settle in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }
}

/**
 * The tables the settle step writes, each with its columns and the view query that defines
 * them over every vault and day (what the table must equal once settled; the settle tests
 * compare them).
 */
export function settledTables(db: string): { table: string; columns: string[]; select: string }[] {
  // Every vault and day, every input dirty: the composition views read for every vault.
  const all: Filter = () => '1';
  return TARGETS.map((t) => ({ table: t.table, columns: t.columns, select: t.select(db, all) }));
}
