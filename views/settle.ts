/**
 * The settle step (docs/architecture.md#precomputed-metrics): writes the metrics tables of
 * migrations 018, 021, 024, 025 and 026 from the plain views that define them, each from its file
 * `views/settle/<table>.sql` (views/settle-targets.ts), for the vaults and days whose inputs
 * changed since the last settle, so the API reads short rows instead of views over the whole
 * history.
 *
 * Which rows (views/settle/loop/dirty.sql): a raw row ingested since the last settle (rates,
 * transfers, redemptions, snapshots, activity) changes its vault from the UTC day of its block
 * time (or snapshot time) on: closes, supply and snapshots carry forward and the APYs and
 * tvl30DayChange look back 7 and 30 days, so every later day is recomputed. A registry change
 * recomputes the whole vault, and a change of `service_settings` (the primary chain) every vault.
 * A new UTC day recomputes every vault from the last settled day (the grids end at today), and a
 * new UTC hour the holder counts from the day of the last settled hour (today's row gains a
 * sample). The head (`metrics_vault_head`, one row per vault for today) is rewritten for every
 * dirty vault and for each vault whose watermark moved since it was written. Retractions and
 * replays are raw rows like any other, so they are covered; a restart resumes from
 * `metrics_settle_state`, and without it everything is recomputed.
 *
 * How: one INSERT ... SELECT per file (views/settle/loop/write.sql), each at two
 * versions of its own above every earlier one: the file's rows at the higher and, for every row
 * stored in the range they replace, a tombstone at the lower, so ReplacingMergeTree(version,
 * deleted) keeps the new row where the views still produce one and hides the others. The rows
 * are the views' own, so the tables answer exactly what the views answer at the settle's clock.
 */
import { failpoint } from '../core/failpoints.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { type FromDays, type Input, settleSql, TARGETS, writeQuery } from './settle-targets.ts';

/**
 * On a ClickHouse server, rows ingested this long before the last settle are scanned again: a
 * concurrent insert takes its `ingested_at` before it commits. chDB runs one statement at a time
 * in this process, so an insert is visible before the next settle reads.
 */
const RESCAN_MS = 10_000;

export interface SettleResult {
  /** Vault -> first UTC day recomputed ('1970-01-01' for the whole history). */
  settled: Map<string, string>;
  /** The highest version written (0 when nothing was dirty). */
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
  }>(settleSql('loop/state', store.database));
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
 * The vaults, inputs and first UTC days to recompute at the clock `clock` (views/settle/loop/
 * dirty.sql), and the newest `ingested_at` seen (the next `since`).
 */
async function dirtyVaults(
  store: Store,
  state: State,
  clock: { today: string; hour: string },
): Promise<{ dirty: Dirty; seen: string }> {
  const db = store.database;
  const rows = await store.query<{ input: Input; vault: string; d: string; t: string; now: string }>(
    settleSql('loop/dirty', db),
    {
      since: state.since,
      margin_ms: store.kind === 'chdb' ? 0 : RESCAN_MS,
      new_day: clock.today > state.settledDay ? 1 : 0,
      settled_day: state.settledDay,
      new_hour: clock.hour > state.settledHour ? 1 : 0,
      settled_hour: state.settledHour,
      holder_state: state.holderState ? 1 : 0,
    },
  );
  const dirty: Dirty = new Map();
  for (const r of rows) mark(dirty, r.vault, r.input, r.d);
  // The newest row seen, but never this millisecond: a later insert may still take it.
  // (ISO-like strings: their order is the time order; an empty t is no ingestion.)
  let seen = state.since;
  for (const r of rows) {
    const t = [r.t, r.now].sort()[0];
    if (t > seen) seen = t;
  }
  // Nor past an insert the consumers have not completed (streams/insert-journal.ts).
  const [p] = await store.query<{ first: string | null }>(settleSql('loop/open-inserts', db));
  if (p?.first && p.first < seen) seen = p.first;
  return { dirty, seen };
}

/** Per vault with one of `inputs` dirty in `dirty`, its first day dirty for one of them. */
function fromOf(dirty: Dirty, inputs: readonly Input[]): FromDays {
  const from = new Map<string, string>();
  for (const [vault, m] of dirty)
    for (const i of inputs) {
      const d = m.get(i);
      const f = from.get(vault);
      if (d !== undefined && (f === undefined || d < f)) from.set(vault, d);
    }
  return from;
}

/** Each settled table's columns but version and deleted, from the engine (views/settle/loop/columns.sql). */
async function tableColumns(store: Store): Promise<Map<string, string[]>> {
  const rows = await store.query<{ table: string; columns: string[] }>(
    settleSql('loop/columns', store.database),
    {
      db: store.database,
      tables: [...new Set(TARGETS.map((t) => t.table))],
    },
  );
  return new Map(rows.map((r) => [r.table, r.columns]));
}

/** Recomputes the metrics rows the changes since the last settle affect; returns what it settled. */
export async function settleMetrics(store: Store): Promise<SettleResult> {
  const db = store.database;
  const state = await readState(store);
  const [clock] = await store.query<{ today: string; hour: string }>(settleSql('loop/clock', db));
  const { dirty, seen } = await dirtyVaults(store, state, clock);
  let version = 0n;
  const ms: Record<string, number> = {};
  if (dirty.size) {
    const columns = await tableColumns(store);
    const now = BigInt(Date.now()) * 1000n;
    // Above every version written before (the state holds the highest).
    let next = now > state.version + 2n ? now : state.version + 2n;
    for (const t of TARGETS) {
      const from = fromOf(dirty, t.inputs);
      if (!from.size) continue;
      const t0 = performance.now();
      const write = writeQuery(t, db, columns.get(t.table) ?? [], from, next);
      // `background`: on the analysts' connection (store/client.ts), outside the lock of the
      // service's own, so the settle never waits for nor delays an insert or an answer; the
      // engine binds the parameters there.
      await store.queryRaw(write.sql, { background: true, params: write.params });
      version = next + 1n;
      next += 2n;
      ms[t.table] = (ms[t.table] ?? 0) + performance.now() - t0;
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
 * to), the loop settles at most every `BACKFILL_SETTLE_MS`: a settle during a backfill takes the
 * engine's threads, recomputes days the backfill's next ranges change again, and competes for the
 * cores with the ingester (bench/sparse-backfill.ts shows it). Once the ingesters are live the loop
 * settles at its interval again.
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
      /** Called after each settle that wrote rows, with `version` already counting it (the API's event stream). */
      onSettled?: (result: SettleResult, version: number) => void;
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
        this.opts.onSettled?.(r, this.version);
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
