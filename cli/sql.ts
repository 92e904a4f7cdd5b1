/**
 * `vaultstream sql`: one statement against the store, read-only unless `--write`. Read-only
 * statements go through the server-side checks of `store/read-only.ts` and run with its caps;
 * a statement that names its own FORMAT prints the engine's bytes as they are, any other is
 * printed as a table, JSON or CSV.
 */
import { VaultstreamError } from '../core/errors.ts';
import type { Store } from '../store/client.ts';
import {
  checkReadOnly,
  DEFAULT_QUERY_LIMITS,
  type Lines,
  limitedSql,
  type QueryLimits,
  sqlError,
} from '../store/read-only.ts';
import { type Format, formatRows } from './output.ts';

/** One string column's values, for the read-only checks. */
export function storeLines(store: Store, background = false): Lines {
  return async (sql) => {
    const text = (await store.queryRaw(sql, { format: 'TSVRaw', background })).bytes.toString('utf8');
    return text === '' ? [] : text.replace(/\n$/, '').split('\n');
  };
}

export interface SqlOptions {
  format: Format;
  write?: boolean;
  limits?: QueryLimits;
}

/** Runs `query` and returns what the CLI prints. */
export async function runSql(store: Store, query: string, opts: SqlOptions): Promise<string | Buffer> {
  if (opts.write) {
    try {
      await store.command(query);
    } catch (err) {
      throw sqlError(err);
    }
    return 'ok\n';
  }
  let checked: Awaited<ReturnType<typeof checkReadOnly>>;
  try {
    checked = await checkReadOnly(storeLines(store), query);
  } catch (err) {
    if (err instanceof VaultstreamError && err.code === 'READ_ONLY' && err.details?.statement)
      throw new VaultstreamError(
        'READ_ONLY',
        `${err.message}. \`vaultstream sql\` is read-only unless --write is given`,
        { details: err.details, cause: err },
      );
    throw err;
  }
  const limits = opts.limits ?? DEFAULT_QUERY_LIMITS;
  try {
    if (checked.format) return (await store.queryRaw(limitedSql(checked, limits))).bytes;
    const out = (await store.queryRaw(limitedSql(checked, limits, 'JSONEachRow'))).bytes.toString('utf8');
    const rows = out
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    return formatRows(rows, opts.format);
  } catch (err) {
    throw sqlError(err);
  }
}
