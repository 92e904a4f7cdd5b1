/** Prints query results as an aligned table, JSON or CSV. */
import { stringify } from 'csv-stringify/sync';

/** The CLI's own renderings of rows. */
export type RowFormat = 'table' | 'json' | 'csv';
/** A CLI rendering, or a ClickHouse output format name (`TabSeparated`, `JSONEachRow`, ...) printed as the engine writes it. */
export type Format = RowFormat | (string & {});

export const ROW_FORMATS: readonly string[] = ['table', 'json', 'csv'];

export function isRowFormat(f: string): f is RowFormat {
  return ROW_FORMATS.includes(f);
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function formatRows(rows: Record<string, unknown>[], format: RowFormat): string {
  if (format === 'json') return `${JSON.stringify(rows, null, 2)}\n`;
  const cols = rows.length ? Object.keys(rows[0]) : [];
  if (format === 'csv') return stringify([cols, ...rows.map((r) => cols.map((c) => cell(r[c])))]);
  if (!cols.length) return '(no rows)\n';
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join(' │ ')
      .trimEnd();
  return [
    line(cols),
    widths.map((w) => '─'.repeat(w)).join('─┼─'),
    ...cells.map(line),
    `(${rows.length} row${rows.length === 1 ? '' : 's'})`,
    '',
  ].join('\n');
}
