/** Prints query results as an aligned table, JSON or CSV. */
import { stringify } from 'csv-stringify/sync';

export type Format = 'table' | 'json' | 'csv';

function cell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export function formatRows(rows: Record<string, unknown>[], format: Format): string {
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
