/**
 * The data version the API keys its response cache by.
 *
 * `pacedVersion`: the API in the consumers' process. The consumers count every landed batch
 * and the settle every rewrite of the metrics tables; on a live chain that is several times a
 * second, and each new version costs every hot endpoint one recompute on the event loop the
 * requests are answered on. The version the API sees moves on at most once per interval
 * (`api.cache.versionIntervalMs`), to the newest one then: new data is at most that much later
 * to show, and the answers say which data they reflect (`X-Data-Watermark`).
 *
 * `storedDataVersion`: an API process that runs without the consumers (the API-only
 * role): read from the store, so the response cache is keyed by what was stored and
 * not by a clock. It is the active parts of the database's tables (count, rows and
 * newest modification time): every insert the consumers land adds a part, so it
 * changes exactly when new data lands (a background merge may change it too, which
 * only costs a cache refill). The API's own snapshot tables (store/snapshots.ts) are
 * left out: they are written for a data version, and counting them made each snapshot
 * a new version, which made a new snapshot, for ever. Read at most once per
 * `minIntervalMs`, in the background: `current()` never waits on the store.
 */
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { SNAPSHOT_PREFIXES } from '../store/snapshots.ts';

/** Tables written by the API itself, not by the consumers: the snapshots and older scratch tables. */
const API_WRITTEN = [...SNAPSHOT_PREFIXES, 'scratch_'];

export interface StoredDataVersion {
  /** The last version read (synchronous; triggers a background refresh when stale). */
  current(): string;
  /** Reads the version now (single flight). */
  refresh(): Promise<string>;
}

export function storedDataVersion(
  store: Store,
  opts: { clock?: () => number; minIntervalMs?: number; log?: Logger } = {},
): StoredDataVersion {
  const clock = opts.clock ?? Date.now;
  const minInterval = opts.minIntervalMs ?? 1000;
  let version = 'unread';
  let readAt = Number.NEGATIVE_INFINITY;
  let running: Promise<string> | undefined;
  const refresh = (): Promise<string> => {
    running ??= (async () => {
      readAt = clock();
      try {
        const [r] = await store.query<{ parts: string; rows: string; modified: string }>(
          `SELECT toString(count()) AS parts, toString(sum(rows)) AS rows,
             toString(toUnixTimestamp64Milli(toDateTime64(max(modification_time), 3))) AS modified
           FROM system.parts WHERE database = {db:String} AND active
             AND NOT arrayExists(p -> startsWith(table, p), {internal:Array(String)})`,
          { db: store.database, internal: API_WRITTEN },
        );
        version = r ? `${r.parts}-${r.rows}-${r.modified}` : 'empty';
      } catch (err) {
        opts.log?.warn({ err: String(err) }, 'data version: store read failed');
      }
      return version;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    current() {
      if (clock() - readAt >= minInterval) void refresh();
      return version;
    },
    refresh,
  };
}

/**
 * `source` (the in-process version: batches landed, metrics settled), moved on at most once
 * per `intervalMs`: a change is shown at once when the last one shown is at least that old,
 * else at the first read once it is.
 */
export function pacedVersion(
  source: () => string,
  opts: { intervalMs: number; clock?: () => number },
): () => string {
  const clock = opts.clock ?? Date.now;
  let shown = source();
  let shownAt = Number.NEGATIVE_INFINITY;
  return () => {
    const v = source();
    if (v === shown) return shown;
    const now = clock();
    if (now - shownAt >= opts.intervalMs) {
      shown = v;
      shownAt = now;
    }
    return shown;
  };
}
