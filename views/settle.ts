/**
 * The settle step (docs/architecture.md#precomputed-metrics): writes the metrics tables of
 * migrations 018, 021, 024 and 025 (views/settle-targets.ts) from the plain views that define them, for the vaults and days whose inputs
 * changed since the last settle, so the API reads short rows instead of views over the whole
 * history.
 *
 * Which rows: a raw row ingested since the last settle (rates, transfers, redemptions,
 * snapshots, activity) changes its vault from the UTC day of its block time (or snapshot time) on: closes,
 * supply and snapshots carry forward and the APYs and tvl30DayChange look back 7 and 30 days, so
 * every later day is recomputed. A registry change recomputes the whole vault, and a change of
 * `service_settings` (the primary chain) every vault. A new UTC day
 * recomputes every vault from the last settled day (the grids end at today), and a new UTC hour
 * the holder counts from the day of the last settled hour (today's row gains a sample). The head
 * (`metrics_vault_head`, one row per vault for today) is rewritten for every dirty vault and for
 * each vault whose watermark moved since it was written. Retractions and
 * replays are raw rows like any other, so they are covered; a restart resumes from
 * `metrics_settle_state`, and without it everything is recomputed.
 *
 * How: one INSERT ... SELECT per table, with the views' rows at version v + 1 and, for every row
 * stored in the recomputed range, a tombstone at version v: ReplacingMergeTree(version, deleted)
 * keeps the new row where the views still produce one and hides the others. The rows are the
 * views' own, so the tables answer exactly what the views answer at the settle's clock.
 */
import { failpoint } from '../core/failpoints.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { quote } from './settle-holders.ts';
import { type Filter, type Froms, type Input, TARGETS } from './settle-targets.ts';

/**
 * On a ClickHouse server, rows ingested this long before the last settle are scanned again: a
 * concurrent insert takes its `ingested_at` before it commits. chDB runs one statement at a time
 * in this process, so an insert is visible before the next settle reads.
 */
const RESCAN_MS = 10_000;

export interface SettleResult {
  /** Vault -> first UTC day recomputed ('1970-01-01' for the whole history). */
  settled: Map<string, string>;
  /** Version of the rows written (0 when nothing was dirty). */
  version: bigint;
  /** Table -> milliseconds its rows took to write (the tables written; bench/views.ts reports them). */
  ms: Record<string, number>;
}

interface State {
  since: string;
  settledDay: string;
  settledHour: string;
  version: bigint;
  /** metrics_holder_since was built from the whole history (migration 026). */
  holderState: boolean;
}

/** Vault -> input -> first dirty UTC day (YYYY-MM-DD). */
type Dirty = Map<string, Map<Input, string>>;

async function readState(store: Store): Promise<State> {
  const [r] = await store.query<{
    since: string;
    day: string;
    hour: string;
    version: string;
    holders: number;
  }>(
    `SELECT toString(since) AS since, toString(settled_day) AS day, toString(settled_hour) AS hour,
       toString(version) AS version, holder_state AS holders
     FROM ${store.database}.metrics_settle_state FINAL WHERE id = 0`,
  );
  return r
    ? {
        since: r.since,
        settledDay: r.day,
        settledHour: r.hour,
        version: BigInt(r.version),
        holderState: Number(r.holders) === 1,
      }
    : {
        since: '1970-01-01 00:00:00.000',
        settledDay: '1970-01-01',
        settledHour: '1970-01-01 00:00:00',
        version: 0n,
        holderState: false,
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
       UNION ALL ${changed('activity', 'activity_raw', 'vault', 'block_time')}
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
  // The head holds each vault's watermark (and the latest settled day it implies): a vault whose
  // watermark moved, or was retracted with a reorg, is dirty for the head.
  const moved = await store.query<{ vault: string }>(
    `SELECT s.vault AS vault FROM ${db}.vault_settlement AS s
     INNER JOIN (SELECT toString(vault) AS vault, watermark FROM ${db}.metrics_vault_head FINAL) AS h ON h.vault = s.vault
     WHERE h.watermark != s.watermark`,
  );
  for (const r of moved) mark(dirty, r.vault, 'watermarks', '1970-01-01');
  // The newest row seen, but never this millisecond: a later insert may still take it.
  // (ISO-like strings: their order is the time order.)
  let seen = since;
  for (const r of rows) {
    const t = [r.t, r.now].sort()[0];
    if (t > seen) seen = t;
  }
  // Nor past an insert the consumers have not completed (streams/insert-journal.ts): its raw rows
  // may be stored without its views' deltas, and the settle that reads them once they are whole
  // must find them dirty still.
  const [p] = await store.query<{ first: string | null }>(
    `SELECT toString(min(w) - toIntervalMillisecond(1)) AS first FROM (
       SELECT argMax(done, ver) AS d, argMax(written_at, ver) AS w FROM ${db}.insert_journal GROUP BY slot
     ) WHERE d = 0 HAVING count() > 0`,
  );
  if (p?.first && p.first < seen) seen = p.first;
  return { dirty, seen };
}

/** The Froms over `dirty`: per vault, its first day dirty for one of the inputs. */
function fromsOf(dirty: Dirty): Froms {
  return (inputs) => {
    const from = new Map<string, string>();
    for (const [vault, m] of dirty)
      for (const i of inputs) {
        const d = m.get(i);
        const f = from.get(vault);
        if (d !== undefined && (f === undefined || d < f)) from.set(vault, d);
      }
    return from;
  };
}

/** The Filter over `dirty`: per vault, from its first day dirty for one of the inputs. */
function filterOf(dirty: Dirty): Filter {
  const froms = fromsOf(dirty);
  return (inputs, day) => {
    const from = froms(inputs);
    if (!from.size) return null;
    const list = `[${[...from.keys()].map(quote).join(', ')}]`;
    if (!day) return `vault IN ${list}`;
    const days = `[${[...from.values()].map((d) => `toDate(${quote(d)})`).join(', ')}]`;
    return `vault IN ${list} AND ${day} >= ${days}[indexOf(${list}, vault)]`;
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
  if (!state.holderState) {
    // metrics_holder_since is built from the whole history once (a store migrated to 026): until
    // a settle completes, every vault with a transfer is dirty for transfers from the start.
    const vaults = await store.query<{ v: string }>(
      `SELECT DISTINCT toString(vault) AS v FROM ${db}.transfers_raw`,
    );
    for (const { v } of vaults) mark(dirty, v, 'transfers', '1970-01-01');
  }
  let version = 0n;
  const ms: Record<string, number> = {};
  if (dirty.size) {
    const now = BigInt(Date.now()) * 1000n;
    version = now > state.version + 2n ? now : state.version + 2n;
    const f = filterOf(dirty);
    const froms = fromsOf(dirty);
    for (const t of TARGETS) {
      const filter = f(t.inputs, t.day);
      if (!filter) continue;
      const t0 = performance.now();
      const select = t.incremental ? await t.incremental(store, froms) : t.select(db, f);
      const cols = t.columns.join(', ');
      // `background`: on the analysts' connection (store/client.ts), outside the lock of the
      // service's own, so the settle never waits for nor delays an insert or an answer. On one
      // thread: on a live chain a settle runs every second, and at the engine's default (a thread
      // per core) it took the core the API's event loop runs on (bench/live.ts).
      await store.queryRaw(
        `INSERT INTO ${db}.${t.table} (${cols}, version, deleted) SETTINGS max_threads = 1
         SELECT ${cols}, toUInt64(${version + 1n}), toUInt8(0) FROM (${select})
         UNION ALL
         SELECT ${cols}, toUInt64(${version}), toUInt8(1) FROM ${db}.${t.table} FINAL WHERE ${filter}`,
        { background: true },
      );
      ms[t.table] = performance.now() - t0;
      failpoint('after-settle-table');
    }
  }
  if (
    dirty.size ||
    !state.holderState ||
    clock.today !== state.settledDay ||
    clock.hour !== state.settledHour
  )
    await store.insert('metrics_settle_state', [
      {
        id: 0,
        since: seen,
        settled_day: clock.today,
        settled_hour: clock.hour,
        version: String(version || state.version),
        holder_state: 1,
      },
    ]);
  const settled = new Map([...dirty].map(([v, m]) => [v, [...m.values()].sort()[0]]));
  return { settled, version, ms };
}

/** Most time between two settles of the loop while `backfilling` holds it. */
export const BACKFILL_SETTLE_MS = 30_000;

/**
 * Runs `settleMetrics` in a loop, `intervalMs` apart, one at a time; `version` counts the settles
 * that wrote rows (part of the API's data version, so an answer cached before a settle is not
 * served after it). While `backfilling()` (an ingester of this process backfilling, or starting
 * to), the loop settles at most every `BACKFILL_SETTLE_MS`: a settle during a backfill takes 0.4-2 s
 * of the engine's threads and recomputes days the backfill's next ranges change again, and it
 * competed for the cores with the ingester: on the sparse-chain bench (bench/sparse-backfill.ts) a
 * settle ran during the ~0.3-0.7 s ingest in six runs of six (the one at start-up, or the next),
 * and the CLI's CPU over the ingest was 470-680 ms against 340-430 ms with the loop held. Once the
 * ingesters are live the loop settles at its interval again.
 */
export class Settler {
  version = 0;
  private running: Promise<SettleResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** When the loop last settled (performance.now()). */
  private settledAt = Number.NEGATIVE_INFINITY;
  /** Loop ticks that saw a backfill, and how many of them a settle begun after them has covered. */
  private backfillTicks = 0;
  private coveredTicks = 0;
  /** Once a backfill ended: the wait for the consumers to store what it published. */
  private stored: { ticks: number; done: boolean } | undefined;

  constructor(
    private readonly store: Store,
    private readonly opts: {
      intervalMs: number;
      log?: Logger;
      backfilling?: () => boolean;
      /**
       * Resolves once the consumers stored everything published when it was called
       * (streams/processor.ts `drained`): a settle covers a backfill only if it begins after that.
       */
      drained?: () => Promise<void>;
      /** Tests: instead of `BACKFILL_SETTLE_MS`. */
      backfillIntervalMs?: number;
    },
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
          { vaults: r.settled.size, ms: Math.round(performance.now() - t0), tables: r.ms },
          'metrics settled',
        );
      }
      return r;
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * False from a loop tick that sees a backfill until a settle has finished that began once the
   * backfill had ended and the consumers had stored what it published: till then the metrics
   * tables lack backfilled days (the settles were held, or ran on a store still behind), so
   * `/readyz` waits for it (api/readiness.ts). True when no backfill was seen.
   */
  get caughtUp(): boolean {
    return this.coveredTicks === this.backfillTicks;
  }

  start(): void {
    // A backfill starting with the process holds the first settle too.
    if (this.opts.backfilling) this.settledAt = performance.now();
    const loop = async () => {
      if (this.stopped) return;
      const backfilling = this.opts.backfilling?.() === true;
      if (backfilling) {
        this.backfillTicks++;
        this.stored = undefined;
      } else if (!this.caughtUp && this.stored?.ticks !== this.backfillTicks) {
        const wait = { ticks: this.backfillTicks, done: false };
        this.stored = wait;
        (this.opts.drained?.() ?? Promise.resolve()).then(
          () => {
            wait.done = true;
          },
          (err) => {
            // Asked again at the next tick.
            if (this.stored === wait) this.stored = undefined;
            // A subscription stopping rejects the wait: that is the shutdown, not a failure.
            if (!this.stopped)
              this.opts.log?.warn({ err: String(err) }, 'waiting for the consumers after a backfill failed');
          },
        );
      }
      const held =
        backfilling &&
        performance.now() - this.settledAt < (this.opts.backfillIntervalMs ?? BACKFILL_SETTLE_MS);
      if (!held) {
        this.settledAt = performance.now();
        // A settle begun while backfilling, or before the consumers stored the backfill, covers
        // nothing new.
        const covers = this.stored?.done ? this.stored.ticks : this.coveredTicks;
        try {
          await this.settleNow();
          this.coveredTicks = covers;
        } catch (err) {
          this.opts.log?.warn({ err: String(err) }, 'metrics settle failed; retried next interval');
        }
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
