/**
 * The analysts' copy of the service's database, refreshed one generation at a time. The service
 * (api/sql/generations.ts) lists each table whose active parts changed, with their directories,
 * and sends the generation here; the analysts' engine (store/read-only-engine.ts) then, per table:
 *
 *   1. hard-links every file of its active parts into a directory of its own store, under a new
 *      table UUID (the service's files are never opened, only linked),
 *   2. attaches it as INCOMING_DATABASE.<name> with the service's own CREATE statement, merges
 *      stopped (the copy is never rewritten: ReplacingMergeTree rows stay as the service has them),
 *   3. swaps it with the served table (`EXCHANGE TABLES`, atomic) and drops the old copy; the
 *      engine removes its links once no query reads it any more.
 *
 * Views and materialized views are created from the service's statements when they are new or
 * changed, and what the service no longer has is dropped. A query that started before a swap
 * reads the copy it resolved; api/sql/server.ts starts no query while a generation is applied, so
 * every query reads one generation.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type EngineSession, INCOMING_DATABASE } from './read-only-engine.ts';

/** A table, view or materialized view of the service's database. */
export interface ReplicaObject {
  name: string;
  engine: string;
  /** Its UUID in the service's store (the directory its parts are under). */
  uuid: string;
  /** Its CREATE statement, as the service's engine writes it (`system.tables.create_table_query`). */
  create: string;
}

/** A MergeTree table with its active parts (each part's name and directory in the service's store). */
export interface ReplicaTable extends ReplicaObject {
  parts: { name: string; path: string }[];
}

export interface Generation {
  id: number;
  /** The MergeTree tables whose parts changed since the last generation. */
  tables: ReplicaTable[];
  /** Every view and materialized view, with its statement. */
  views: ReplicaObject[];
  /** Every name the service's database has now (what is not here is dropped). */
  names: string[];
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Hard-links every file under `from` to the same place under `to` (directories made, nothing copied). */
async function linkTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from, { withFileTypes: true });
  await Promise.all(
    entries.map((e) =>
      e.isDirectory()
        ? linkTree(join(from, e.name), join(to, e.name))
        : e.isFile()
          ? link(join(from, e.name), join(to, e.name))
          : Promise.resolve(),
    ),
  );
}

export interface Replica {
  /**
   * Applies a generation; resolves once every table and view of it is served, with the tables
   * whose parts were gone before they were linked (they keep their last copy; the service lists
   * them again next time).
   */
  apply(gen: Generation): Promise<{ missed: string[] }>;
}

/** Whether `err` is a file or directory that is not there (a part the store removed meanwhile). */
const gone = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** The replica in the analysts' engine at `path` (its data directory), serving `served`. */
export function createReplica(admin: EngineSession, path: string, served: string): Replica {
  /** What each view was created from, to create it again only when it changes. */
  const views = new Map<string, string>();
  /** Names served now, with their engine. */
  const present = new Map<string, string>();
  const run = (sql: string) => admin.queryAsync(sql, { format: 'TSVRaw' });

  /** Serves `t`'s listed parts; false when one was gone before it was linked (nothing changed). */
  async function attach(t: ReplicaTable): Promise<boolean> {
    const prefix = `CREATE TABLE ${served}.${t.name} `;
    if (!IDENT.test(t.name) || !t.create.startsWith(prefix)) return true;
    const id = randomUUID();
    const to = join(path, 'store', id.slice(0, 3), id);
    await mkdir(to, { recursive: true });
    try {
      for (const part of t.parts) await linkTree(part.path, join(to, part.name));
    } catch (err) {
      // Between the listing and the links the store may drop the table, or delete a part a merge
      // or a rewrite replaced: the listing is stale, not the copy, which stays as it was.
      await rm(to, { recursive: true, force: true });
      if (gone(err)) return false;
      throw err;
    }
    await run(`ATTACH TABLE ${INCOMING_DATABASE}.${t.name} UUID '${id}' ${t.create.slice(prefix.length)}`);
    await run(`SYSTEM STOP MERGES ${INCOMING_DATABASE}.${t.name}`);
    const was = present.get(t.name);
    if (was?.endsWith('MergeTree')) {
      await run(`EXCHANGE TABLES ${served}.${t.name} AND ${INCOMING_DATABASE}.${t.name}`);
      await run(`DROP TABLE ${INCOMING_DATABASE}.${t.name}`);
    } else {
      if (was) await drop(t.name, was);
      await run(`RENAME TABLE ${INCOMING_DATABASE}.${t.name} TO ${served}.${t.name}`);
    }
    present.set(t.name, t.engine);
    return true;
  }

  async function drop(name: string, engine: string): Promise<void> {
    await run(
      `DROP ${/View$/.test(engine) && !/MergeTree/.test(engine) ? 'VIEW' : 'TABLE'} IF EXISTS ${served}.${name}`,
    );
    present.delete(name);
    views.delete(name);
  }

  /** Creates the new or changed views; one may read another, so in as many rounds as that takes. */
  async function syncViews(list: ReplicaObject[]): Promise<void> {
    let pending = list.filter((v) => IDENT.test(v.name) && views.get(v.name) !== v.create);
    while (pending.length) {
      const failed: ReplicaObject[] = [];
      let lastError: unknown;
      for (const v of pending) {
        try {
          // The admin connection checks no dependencies (store/read-only-engine.ts): a view another
          // reads is dropped and created again like any other.
          const was = present.get(v.name);
          if (was) await drop(v.name, was);
          await run(v.create);
          views.set(v.name, v.create);
          present.set(v.name, v.engine);
        } catch (err) {
          failed.push(v);
          lastError = err;
        }
      }
      if (failed.length === pending.length) throw lastError;
      pending = failed;
    }
  }

  return {
    async apply(gen) {
      const missed: string[] = [];
      for (const t of gen.tables) if (!(await attach(t))) missed.push(t.name);
      const names = new Set(gen.names);
      for (const [name, engine] of [...present]) if (!names.has(name)) await drop(name, engine);
      await syncViews(gen.views);
      return { missed };
    },
  };
}
