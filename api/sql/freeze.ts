/**
 * The service's side of the analysts' copy (store/read-only-replica.ts): each generation freezes
 * the tables whose active parts changed since the last one (`ALTER TABLE ... FREEZE`: hard links
 * to the parts under the store's shadow/, made by the engine under the table's lock, so a merge
 * or an insert in flight never leaves half a part), and lists every view with its statement. It
 * runs on the store's analysts' connection (store/client.ts), never in the turn of the service's
 * own queries, and reads nothing but system tables.
 *
 * Tables are frozen one after another: a batch that lands meanwhile may be in one table's copy
 * and not yet in another's until the next generation.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Store } from '../../store/client.ts';
import type { Generation, ReplicaObject } from '../../store/read-only-replica.ts';
import { SNAPSHOT_PREFIXES } from '../../store/snapshots.ts';

const sql = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const OBJECTS = sql('./replica-objects.sql');
const PARTS = sql('./replica-parts.sql');
const STORE_PATH = sql('./store-path.sql');

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Freezer {
  /** The next generation, or undefined when nothing changed since the last one. */
  next(): Promise<Generation | undefined>;
  /** Removes what is left of a generation's freeze once the analysts' process has taken it. */
  done(gen: Generation): void;
  /** Forgets what was sent: the next generation copies every table (a restarted process). */
  reset(): void;
}

/** The store's engine directory (its `default` disk): freezes land under its shadow/. */
export async function storeDirectory(store: Store): Promise<string> {
  const text = (await store.queryRaw(STORE_PATH, { background: true })).bytes.toString('utf8').trim();
  if (!text) throw new Error('the store has no default disk');
  return resolve(text);
}

/**
 * Removes the freezes of SQL interfaces whose process is gone (`sql_<pid>_...` under the store's
 * shadow/): their hard links would keep parts the store merged away on disk.
 */
export function sweepFreezes(storePath: string): void {
  const shadow = join(storePath, 'shadow');
  let names: string[];
  try {
    names = readdirSync(shadow);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^sql_(\d+)_/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      rmSync(join(shadow, name), { recursive: true, force: true });
    }
  }
}

/** The freezes of one SQL interface (`name` prefixes its freezes) of the store whose directory is `storePath`. */
export function createFreezer(store: Store, name: string, storePath: string): Freezer {
  let seq = 0;
  /** Per table, what its last copy was made of: its statement and its parts. */
  let sent = new Map<string, string>();
  let views = '';
  let names = '';
  const rows = async <T>(text: string, params: Record<string, string> = {}): Promise<T[]> => {
    const out = (await store.queryRaw(text, { format: 'JSONEachRow', background: true, params })).bytes
      .toString('utf8')
      .trim();
    return out ? out.split('\n').map((l) => JSON.parse(l) as T) : [];
  };
  return {
    async next() {
      const db = store.database;
      const snapshots = `[${SNAPSHOT_PREFIXES.map((p) => `'${p}'`).join(',')}]`;
      const objects = (await rows<ReplicaObject>(OBJECTS, { db, snapshots })).filter((o) =>
        IDENT.test(o.name),
      );
      const parts = new Map(
        (await rows<{ table: string; parts: string }>(PARTS, { db })).map((r) => [r.table, r.parts]),
      );
      const tables = objects.filter((o) => o.engine.endsWith('MergeTree'));
      const others = objects.filter((o) => !o.engine.endsWith('MergeTree') && /View$/.test(o.engine));
      const key = (t: ReplicaObject) => `${t.create}\n${parts.get(t.name) ?? ''}`;
      const changed = tables.filter((t) => sent.get(t.name) !== key(t));
      const all = objects.map((o) => o.name);
      const viewsKey = others.map((o) => o.create).join('\n');
      if (changed.length === 0 && viewsKey === views && all.join(',') === names) return undefined;
      const id = ++seq;
      // Letters, digits and _ only: the engine escapes anything else in the directory it names after it.
      const freeze = `${name}_${id}`;
      for (const t of changed)
        await store.queryRaw(`ALTER TABLE ${db}.${t.name} FREEZE WITH NAME '${freeze}'`, {
          background: true,
        });
      const next = new Map<string, string>();
      for (const t of tables) next.set(t.name, changed.includes(t) ? key(t) : (sent.get(t.name) ?? key(t)));
      sent = next;
      views = viewsKey;
      names = all.join(',');
      return { id, shadow: join(storePath, 'shadow', freeze), tables: changed, views: others, names: all };
    },
    done(gen) {
      rmSync(gen.shadow, { recursive: true, force: true });
    },
    reset() {
      sent = new Map();
      views = '';
      names = '';
    },
  };
}
