/** The documented example and parity queries of docs/queries, run as written (the database renamed). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiFixture } from './api-fixture.ts';
import { ROOT } from './cli.ts';

/** The text of docs/queries/<name>.sql. */
export const docQuery = (name: string) => readFileSync(join(ROOT, 'docs', 'queries', `${name}.sql`), 'utf8');

/** Runs docs/queries/<name>.sql on the fixture's store with `params` (ClickHouse {name:Type} parameters). */
export async function runDoc(
  api: Pick<ApiFixture, 'store'>,
  name: string,
  params: Record<string, unknown> = {},
) {
  const sql = docQuery(name).replaceAll('vaultstream.', `${api.store.database}.`);
  return api.store.query<Record<string, any>>(sql, params);
}
