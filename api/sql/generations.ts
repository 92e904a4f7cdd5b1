/**
 * The service's side of the analysts' copy (store/read-only-replica.ts): each generation lists the
 * tables whose active parts changed since the last one, with every active part's directory
 * (`system.parts`), and every view with its statement. The analysts' process hard-links the parts'
 * files into its own engine. This side reads two system tables a generation, on the store's
 * analysts' connection (store/client.ts), never in the turn of the service's own queries: no DDL,
 * no freeze, no file opened.
 *
 * Why links of live parts hold: a part is immutable once active (a merge or a mutation writes a new
 * one), so a link is the part as listed. A part may be gone before it is linked (its table dropped,
 * or the part removed once a merge replaced it): that table keeps its last copy and is listed again
 * at the next generation (`forget`). Tables are listed together but a batch may land between two of them: it may be in one table's
 * copy and not yet in another's until the next generation.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Store } from '../../store/client.ts';
import type { Generation, ReplicaObject, ReplicaTable } from '../../store/read-only-replica.ts';
import { SNAPSHOT_PREFIXES } from '../../store/snapshots.ts';

const sql = (file: string) => readFileSync(new URL(file, import.meta.url), 'utf8');
const OBJECTS = sql('./replica-objects.sql');
const PARTS = sql('./replica-parts.sql');
const STORE_PATH = sql('./store-path.sql');

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Generations {
  /** The next generation, or undefined when nothing changed since the last one. */
  next(): Promise<Generation | undefined>;
  /** Forgets what was sent: the next generation copies every table (a restarted process). */
  reset(): void;
  /** Forgets what was sent of `tables` (their parts were gone before the copy linked them). */
  forget(tables: string[]): void;
}

/** The store's engine directory (its `default` disk), where every part it lists lives. */
export async function storeDirectory(store: Store): Promise<string> {
  const text = (await store.queryRaw(STORE_PATH, { background: true })).bytes.toString('utf8').trim();
  if (!text) throw new Error('the store has no default disk');
  return resolve(text);
}

/** The generations of the store whose engine directory is `storePath`. */
export function createGenerations(store: Store, storePath: string): Generations {
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
      const parts = new Map<string, { name: string; path: string }[]>();
      for (const p of await rows<{ table: string; name: string; path: string }>(PARTS, { db })) {
        // A part the store lists elsewhere than its own directory is not linked (none is).
        if (!resolve(p.path).startsWith(`${storePath}/`) || !/^[\w-]+$/.test(p.name)) continue;
        const list = parts.get(p.table) ?? [];
        list.push({ name: p.name, path: resolve(p.path) });
        parts.set(p.table, list);
      }
      const key = (t: ReplicaObject) =>
        `${t.create}\n${(parts.get(t.name) ?? []).map((p) => p.name).join(',')}`;
      const tables = objects.filter((o) => o.engine.endsWith('MergeTree'));
      const changed: ReplicaTable[] = tables
        .filter((t) => sent.get(t.name) !== key(t))
        .map((t) => ({ ...t, parts: parts.get(t.name) ?? [] }));
      const others = objects.filter((o) => !o.engine.endsWith('MergeTree') && /View$/.test(o.engine));
      const all = objects.map((o) => o.name);
      const viewsKey = others.map((o) => o.create).join('\n');
      if (changed.length === 0 && viewsKey === views && all.join(',') === names) return undefined;
      sent = new Map(tables.map((t) => [t.name, key(t)]));
      views = viewsKey;
      names = all.join(',');
      return { id: ++seq, tables: changed, views: others, names: all };
    },
    reset() {
      sent = new Map();
      views = '';
      names = '';
    },
    forget(tables) {
      for (const t of tables) sent.delete(t);
    },
  };
}
