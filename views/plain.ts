/**
 * The plain views: one file each under `views/plain/<name>.sql`, the one definition of that
 * view (`CREATE OR REPLACE VIEW` plus its COMMENTs). `migrate` applies them all after the
 * versioned migrations, every time, each after the views it reads (docs/architecture.md#view-layout).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VaultstreamError } from '../core/errors.ts';

export const PLAIN_DIR = join(dirname(fileURLToPath(import.meta.url)), 'plain');

export interface PlainView {
  name: string;
  sql: string;
  /** Other plain views this one reads (`{{db}}.<name>` references). */
  reads: string[];
  checksum: string;
}

/** Every plain view, ordered so that each comes after the views it reads. */
export function listPlainViews(dir = PLAIN_DIR): PlainView[] {
  const views = new Map<string, PlainView>();
  for (const f of readdirSync(dir)
    .filter((n) => /^\w+\.sql$/.test(n))
    .sort()) {
    const name = f.slice(0, -4);
    const sql = readFileSync(join(dir, f), 'utf8');
    if (!new RegExp(`^CREATE OR REPLACE VIEW \\{\\{db\\}\\}\\.${name} `, 'm').test(sql))
      throw new VaultstreamError(
        'MIGRATION_FAILED',
        `views/plain/${f} must define the view ${name} (CREATE OR REPLACE VIEW {{db}}.${name} {{on_cluster}} ...)`,
      );
    const refs = new Set([...sql.matchAll(/\{\{db\}\}\.(\w+)/g)].map((m) => m[1]));
    refs.delete(name);
    views.set(name, {
      name,
      sql,
      reads: [...refs],
      checksum: createHash('sha256').update(sql).digest('hex').slice(0, 16),
    });
  }
  const ordered: PlainView[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (v: PlainView, path: string[]) => {
    const s = state.get(v.name);
    if (s === 'done') return;
    if (s === 'visiting')
      throw new VaultstreamError(
        'MIGRATION_FAILED',
        `plain views read each other in a cycle: ${[...path, v.name].join(' -> ')}`,
      );
    state.set(v.name, 'visiting');
    for (const r of v.reads) {
      const dep = views.get(r);
      if (dep) visit(dep, [...path, v.name]);
    }
    state.set(v.name, 'done');
    ordered.push(v);
  };
  for (const v of views.values()) visit(v, []);
  for (const v of ordered) v.reads = v.reads.filter((r) => views.has(r));
  return ordered;
}
