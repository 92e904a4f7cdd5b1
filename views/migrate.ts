/**
 * Applies the ordered `.sql` files of `views/migrations` once each, recording them in
 * `schema_migrations`, then every plain view of `views/plain` (views/plain.ts), every time.
 * Statements are idempotent (IF NOT EXISTS, CREATE OR REPLACE), so a run cut short is
 * completed by the next one. An applied file whose text changed is an error
 * (docs/architecture.md#view-layout).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { expectRows, isHex, isUInt } from '../store/row-shape.ts';
import { listPlainViews } from './plain.ts';
import { type RenderTarget, renderStatements } from './render.ts';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/**
 * Numbers of migrations that held only plain views, now in views/plain: a store migrated
 * before keeps them in its ledger, so no new file may take their number (test/unit/render.test.ts).
 */
export const RETIRED_VERSIONS: readonly number[] = [3, 6, 8, 9, 11, 12, 13, 14, 16, 17];

/**
 * Applied files whose plain-view statements moved to views/plain: the checksum they were
 * applied with still counts as applied (the tables they created are unchanged).
 */
const VIEWS_MOVED_OUT: Readonly<Record<string, string>> = {
  '010_operators_fee_rates.sql': '1ef2ffda0d54764a',
};

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const sql = readFileSync(join(dir, f), 'utf8');
      return {
        version: Number(f.slice(0, 3)),
        name: f,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex').slice(0, 16),
      };
    });
}

export interface MigrateResult {
  applied: string[];
  skipped: string[];
  /** The plain views (re)defined, in the order applied. */
  views: string[];
}

export async function migrate(
  store: Store,
  target: RenderTarget,
  log?: Logger,
  dir?: string,
  viewsDir?: string,
): Promise<MigrateResult> {
  const db = target.database;
  const onCluster = target.cluster ? ` ON CLUSTER ${target.cluster}` : '';
  const engine = target.cluster ? 'Replicated' : 'Atomic';
  await store.command(
    `CREATE DATABASE IF NOT EXISTS ${db}${target.cluster ? onCluster : ` ENGINE = ${engine}`}`,
  );
  await store.command(
    `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations${onCluster} (version UInt32 COMMENT 'Migration number', ` +
      `name String COMMENT 'File name', checksum String COMMENT 'sha256 prefix of the file as applied', ` +
      `applied_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When it was applied') ` +
      `ENGINE = ${target.cluster ? 'ReplicatedReplacingMergeTree' : 'ReplacingMergeTree'} ORDER BY version ` +
      `COMMENT 'Migrations applied by vaultstream migrate'`,
  );
  const done = new Map(
    expectRows(
      'applied migrations',
      await store.query<{ version: number; checksum: string }>(
        `SELECT version, argMax(checksum, applied_at) AS checksum FROM ${db}.schema_migrations GROUP BY version`,
      ),
      { version: isUInt, checksum: isHex },
    ).map((r) => [Number(r.version), r.checksum]),
  );
  const result: MigrateResult = { applied: [], skipped: [], views: [] };
  for (const m of listMigrations(dir)) {
    const prev = done.get(m.version);
    if (prev !== undefined) {
      if (prev !== m.checksum && VIEWS_MOVED_OUT[m.name] === prev) {
        await store.insert('schema_migrations', [{ version: m.version, name: m.name, checksum: m.checksum }]);
        result.skipped.push(m.name);
        continue;
      }
      if (prev !== m.checksum)
        throw new VaultstreamError(
          'MIGRATION_FAILED',
          `migration ${m.name} was applied with checksum ${prev} but the file now has ${m.checksum}; add a new migration instead of editing an applied one`,
        );
      result.skipped.push(m.name);
      continue;
    }
    for (const stmt of renderStatements(m.sql, target)) {
      try {
        await store.command(stmt);
      } catch (cause) {
        throw new VaultstreamError('MIGRATION_FAILED', `migration ${m.name} failed: ${String(cause)}`, {
          cause,
          details: { statement: stmt.slice(0, 500) },
        });
      }
    }
    await store.insert('schema_migrations', [{ version: m.version, name: m.name, checksum: m.checksum }]);
    log?.info({ migration: m.name }, 'migration applied');
    result.applied.push(m.name);
  }
  for (const v of listPlainViews(viewsDir)) {
    for (const stmt of renderStatements(v.sql, target)) {
      try {
        await store.command(stmt);
      } catch (cause) {
        throw new VaultstreamError(
          'MIGRATION_FAILED',
          `view views/plain/${v.name}.sql failed: ${String(cause)}`,
          {
            cause,
            details: { statement: stmt.slice(0, 500) },
          },
        );
      }
    }
    result.views.push(v.name);
  }
  return result;
}
