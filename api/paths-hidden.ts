/**
 * Texts the service shows to clients without any path of this machine: `/readyz`'s reasons
 * (an ingester's or the bus's error names the data directory's files) and the SQL interface's
 * errors (api/sql/engine-errors.ts).
 */
import { homedir, tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Every path under `roots` (and this machine's usual ones: the repository, temp, home, working directory) as `<path>`. */
export function withoutPaths(text: string, roots: string[] = []): string {
  const all = [...new Set([...roots, REPO, tmpdir(), homedir(), process.cwd(), '/var/lib/clickhouse'])]
    .filter((r) => r.length > 1)
    .map((r) => r.replace(/\/+$/, ''))
    .sort((a, b) => b.length - a.length);
  let out = text;
  for (const root of all) {
    const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`${escaped}(?=$|[/\\s'"),;:\\]])[^\\s'"),;\\]]*`, 'g'), '<path>');
  }
  return out;
}

/**
 * A text with no absolute path at all (two or more segments from the root) where none is data:
 * `/readyz`'s reasons.
 */
export function withoutAnyPath(text: string): string {
  return withoutPaths(text).replace(/(?<![\w.:/])\/(?:[\w.@+-]+\/)+[\w.@+-]*/g, '<path>');
}
