/**
 * Applies the ordered `.sql` files of `views/migrations` once each, recording them in
 * `schema_migrations`. Statements are idempotent (IF NOT EXISTS), so a run cut short
 * is completed by the next one. An applied file whose text changed is an error.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VaultstreamError } from '../core/errors.ts';
import type { Logger } from '../core/log.ts';
import type { Store } from '../store/client.ts';
import { expectRows, isHex, isUInt } from '../store/row-shape.ts';
import { type RenderTarget, renderStatements } from './render.ts';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

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
}

export async function migrate(
  store: Store,
  target: RenderTarget,
  log?: Logger,
  dir?: string,
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
  const result: MigrateResult = { applied: [], skipped: [] };
  for (const m of listMigrations(dir)) {
    const prev = done.get(m.version);
    if (prev !== undefined) {
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
  return result;
}
