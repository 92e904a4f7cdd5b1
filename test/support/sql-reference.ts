/**
 * What the SQL interface itself says a query returns, as the reference the drivers' answers are
 * compared with (test/integration/bi-drivers.test.ts): plain HTTP, the column types from
 * JSONCompactEachRowWithNamesAndTypes, and every value rendered by the engine as text (toString,
 * or toJSONString for Map and Array), so no client decodes a binary format here.
 */
import { canonical, unwrapType } from './drivers.ts';

export interface Reference {
  columns: string[];
  types: string[];
  /** canonical() rows, sorted. */
  rows: unknown[][];
}

/** POSTs `sql` to the interface; the response text of a 200, else an error with status and body. */
export async function post(url: string, sql: string, database = 'vaultstream'): Promise<string> {
  const res = await fetch(`${url}/?database=${database}`, { method: 'POST', body: sql });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}\n${sql}`);
  return text;
}

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown[]);

const quote = (name: string) => `\`${name.replaceAll('`', '\\`')}\``;

export async function reference(url: string, sql: string): Promise<Reference> {
  const [columns, types] = lines(
    await post(url, `SELECT * FROM (${sql}) LIMIT 0 FORMAT JSONCompactEachRowWithNamesAndTypes`),
  ) as string[][];
  const asText = columns.map((c, i) =>
    /^(Array|Map)\(/.test(unwrapType(types[i])) ? `toJSONString(${quote(c)})` : `toString(${quote(c)})`,
  );
  const raw = lines(await post(url, `SELECT ${asText.join(', ')} FROM (${sql}) FORMAT JSONCompactEachRow`));
  const rows = raw.map((r) =>
    r.map((v, i) =>
      canonical(
        types[i],
        /^(Array|Map)\(/.test(unwrapType(types[i])) && v !== null ? JSON.parse(v as string) : v,
      ),
    ),
  );
  return { columns, types, rows: sortRows(rows) };
}

/** Rows in one order (by their JSON), for comparing results whose order the query leaves open. */
export const sortRows = (rows: unknown[][]): unknown[][] =>
  rows
    .map((r) => [JSON.stringify(r), r] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);

/** A driver's rows in canonical form (with the reference's types), sorted. */
export const canonicalRows = (types: string[], rows: unknown[][]): unknown[][] =>
  sortRows(rows.map((r) => r.map((v, i) => canonical(types[i], v))));
