/**
 * The pipeline's own lookups (the consumer's stored-state check, migrations, snapshots) act on
 * what they read: a row that cannot be theirs (another key, a value of the wrong kind, an id
 * outside what was asked) must stop them loudly, never be acted on. The store clears what a
 * failed query left in the engine's session (store/chdb-output.ts); this is the second line.
 */
import { VaultstreamError } from '../core/errors.ts';

/** Per column, whether a value can be the column's. */
export type RowShape = Record<string, (value: unknown) => boolean>;

export const isUInt = (v: unknown): boolean =>
  (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) || (typeof v === 'string' && /^\d+$/.test(v));
export const isFlag = (v: unknown): boolean => v === 0 || v === 1;
export const isHex = (v: unknown): boolean => typeof v === 'string' && /^[0-9a-f]+$/.test(v);

/**
 * Returns `rows` when every row has exactly the columns of `shape` and each value passes;
 * throws STORE_QUERY_FAILED naming the lookup and the first row that does not.
 */
export function expectRows<T>(what: string, rows: T[], shape: RowShape): T[] {
  const keys = Object.keys(shape);
  for (const [i, row] of rows.entries()) {
    const r = row as Record<string, unknown>;
    const own = r && typeof r === 'object' ? Object.keys(r) : [];
    const bad =
      own.length !== keys.length || own.some((k) => !(k in shape)) || keys.some((k) => !shape[k](r[k]));
    if (bad)
      throw new VaultstreamError(
        'STORE_QUERY_FAILED',
        `${what}: row ${i} cannot be this lookup's (expected columns ${keys.join(', ')}): ${JSON.stringify(row).slice(0, 300)}`,
        { retryable: false, details: { lookup: what, row: i } },
      );
  }
  return rows;
}
