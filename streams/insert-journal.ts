/**
 * Exactly once in effect for an insert that was cut short (views/migrations/027_insert_journal.sql).
 *
 * An INSERT into a raw table writes the raw part and the parts of every materialized view over
 * it, and the engine commits them one at a time. A process killed, a disk filled or a view failing
 * in between leaves some of them stored: the raw rows without their balance deltas, or the deltas
 * without the raw rows. A batch then delivered again cannot tell: the stored-state lookup
 * (streams/dedup.ts) reads the raw table, and would drop the events whose deltas are missing, or
 * insert again those whose deltas are already summed.
 *
 * The engine can complete such an insert itself: run again with the same rows and the same
 * deduplication token, each table keeps the blocks it stored and takes the ones it lacks (the
 * views' blocks carry tokens derived from it: deduplicate_blocks_in_dependent_materialized_views).
 * So an insert into a table that views read is first written to the journal, rows and token, as
 * one part of its own (atomic); then inserted; then marked done. An entry left pending is inserted again, unchanged, before the
 * consumers look up or insert anything else: at start, and before every batch while the store may
 * have writers this process does not see (a ClickHouse server) or after an insert of its own failed.
 * A pending entry is redone promptly, well inside the tables' deduplication window.
 */
import { randomUUID } from 'node:crypto';
import { errorMessage } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { expectRows, isFlag, isUInt } from '../store/row-shape.ts';

/** A slot's latest entry, as the journal holds it. */
interface Entry {
  slot: string;
  ver: number;
  tbl: string;
  cols: string;
  token: string;
  rows_base64: string;
}

/** Characters a journal field may hold: it is written as one TabSeparated line, unescaped. */
const PLAIN = /^[\w.:/,+=-]*$/;

/** Done slots of other processes are deleted once this old (they hold no rows, only their mark). */
const STALE_SLOT_MS = 3_600_000;

export interface InsertJournalOptions {
  log?: Logger;
  /** Tells data errors (the rows cannot be stored: nothing was) from failures of the store. */
  isDataError: (err: unknown) => boolean;
  /**
   * Whether another process may write the store's tables (a ClickHouse server): its pending
   * entries are then looked for before every insert, not only at start.
   */
  sharedStore: boolean;
}

export class InsertJournal {
  /** This process's part of every slot name: its entries are its own. */
  readonly writer = randomUUID();
  private readonly log: Logger;
  private lastVer = 0;
  /** An insert of this process failed and its entry may still be pending. */
  private ownPending = false;
  private recovered = false;
  /**
   * The tables materialized views read (known after the first `recover`): only their inserts write
   * several parts. An insert into any other table is one part, stored whole or not at all, and
   * goes without an entry.
   */
  private withViews?: Set<string>;

  constructor(
    private readonly store: Store,
    private readonly opts: InsertJournalOptions,
  ) {
    this.log = opts.log ?? silentLogger;
  }

  /** Strictly increasing within this process, microseconds since the epoch. */
  private nextVer(): number {
    this.lastVer = Math.max(Date.now() * 1000, this.lastVer + 1);
    return this.lastVer;
  }

  /** Writes a slot's entry; `ver` defaults to this process's next (another's slot: its entry's + 1). */
  private async write(
    slot: string,
    done: 0 | 1,
    tbl: string,
    cols: string,
    token: string,
    rows: string,
    ver = this.nextVer(),
  ) {
    for (const v of [slot, tbl, cols, token])
      if (!PLAIN.test(v))
        throw new Error(`insert journal: field cannot be written plainly: ${JSON.stringify(v)}`);
    const line = `${slot}\t${ver}\t${done}\t${tbl}\t${cols}\t${token}\t${rows}\n`;
    await this.store.insertTsv(
      'insert_journal',
      ['slot', 'ver', 'done', 'tbl', 'cols', 'token', 'rows_base64'],
      Buffer.from(line),
    );
  }

  /**
   * Inserts `tsv` into `table` with deduplication token `token`, exactly once in effect whatever
   * cuts it short. `stream` names the bus partition whose batch this is (one insert at a time each).
   * A data error (the store refused the rows: none was stored) is thrown with the entry done, for
   * the caller to split the rows; any other failure leaves it pending, to be redone first.
   */
  async insert(
    stream: string,
    table: string,
    columns: readonly string[],
    tsv: Buffer,
    token: string,
  ): Promise<void> {
    if (this.withViews && !this.withViews.has(table)) return this.run(table, columns, tsv, token);
    const slot = `${this.writer}/${stream}`;
    const cols = columns.join(',');
    await this.write(slot, 0, table, cols, token, tsv.toString('base64'));
    try {
      await this.run(table, columns, tsv, token);
    } catch (err) {
      if (!this.opts.isDataError(err)) {
        this.ownPending = true;
        throw err;
      }
      await this.write(slot, 1, table, cols, token, '');
      throw err;
    }
    await this.write(slot, 1, table, cols, token, '');
  }

  private run(table: string, columns: readonly string[], tsv: Buffer, token: string): Promise<void> {
    return this.store.insertTsv(table, columns, tsv, {
      insert_deduplication_token: token,
      deduplicate_blocks_in_dependent_materialized_views: 1,
    });
  }

  /**
   * Redoes every pending entry (any process's), oldest slot first, and marks each done. Needed
   * before the consumers' first lookup, and before each later one while `sharedStore` or after
   * an insert of this process failed; otherwise a no-op. Returns how many entries it redid.
   */
  async recover(): Promise<number> {
    if (this.recovered && !this.opts.sharedStore && !this.ownPending) return 0;
    const db = this.store.database;
    this.withViews ??= new Set(
      (
        await this.store.query<{ name: string }>(
          `SELECT name FROM system.tables WHERE database = {db:String} AND notEmpty(dependencies_table)`,
          { db },
        )
      ).map((r) => r.name),
    );
    const pending = expectRows(
      'pending insert journal slots',
      await this.store.query<{ slot: string; done: number; stale: number }>(
        `SELECT slot, argMax(done, ver) AS done,
           toUInt8(max(written_at) < now64(3) - toIntervalMillisecond(${STALE_SLOT_MS})) AS stale
         FROM ${db}.insert_journal GROUP BY slot`,
      ),
      { slot: (v) => typeof v === 'string' && PLAIN.test(v), done: isFlag, stale: isFlag },
    );
    let redone = 0;
    for (const { slot } of pending.filter((p) => Number(p.done) === 0)) {
      const [e] = expectRows(
        'pending insert journal entry',
        await this.store.query<Entry>(
          `SELECT slot, ver, tbl, cols, token, rows_base64 FROM ${db}.insert_journal
           WHERE slot = {slot:String} ORDER BY ver DESC LIMIT 1`,
          { slot },
        ),
        {
          slot: (v) => v === slot,
          ver: isUInt,
          tbl: (v) => typeof v === 'string' && PLAIN.test(v),
          cols: (v) => typeof v === 'string' && PLAIN.test(v),
          token: (v) => typeof v === 'string' && PLAIN.test(v),
          rows_base64: (v) => typeof v === 'string',
        },
      );
      if (!e) continue;
      const columns = e.cols.split(',');
      try {
        if (e.rows_base64) await this.run(e.tbl, columns, Buffer.from(e.rows_base64, 'base64'), e.token);
      } catch (err) {
        if (!this.opts.isDataError(err)) throw err;
        // Refused now as then: it stored nothing either time.
        this.log.error({ table: e.tbl, token: e.token, err: errorMessage(err) }, 'journalled insert refused');
      }
      // Past the entry's own version: its writer (possibly another process, on another clock) may
      // mark it done too, but never mistakes this mark for a later entry of its own.
      await this.write(e.slot, 1, e.tbl, e.cols, e.token, '', Number(e.ver) + 1);
      redone++;
      this.log.warn({ table: e.tbl, token: e.token }, 'completed an insert that had been cut short');
    }
    // Other processes' finished slots, long idle: their last row holds no data, only the mark.
    const stale = pending
      .filter((p) => Number(p.done) === 1 && Number(p.stale) === 1 && !p.slot.startsWith(this.writer))
      .map((p) => p.slot);
    if (stale.length)
      await this.store
        .command(`DELETE FROM ${db}.insert_journal WHERE slot IN (${stale.map((s) => `'${s}'`).join(',')})`)
        .catch((err) =>
          this.log.warn({ err: errorMessage(err) }, 'could not delete idle insert journal slots'),
        );
    this.recovered = true;
    this.ownPending = false;
    return redone;
  }
}
