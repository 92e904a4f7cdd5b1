/** `text/csv` bodies (performance-history `format=csv`), built with csv-stringify. */
import { stringify } from 'csv-stringify/sync';
import type { LoadResult } from './cache-entry.ts';

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/** A column: the record key and, optionally, a different header name. */
export type CsvColumn = string | { key: string; header: string };

/**
 * Renders records as CSV with a header row. Values are written as they are:
 * numbers in JavaScript notation, booleans as `true`/`false`, null and
 * undefined as empty cells; text that could start a spreadsheet formula is
 * not altered (the exports hold numbers, dates and slugs).
 */
export function toCsv(records: readonly Record<string, unknown>[], columns: readonly CsvColumn[]): string {
  return stringify(records as Record<string, unknown>[], {
    header: true,
    columns: columns.map((c) => (typeof c === 'string' ? { key: c } : c)),
    cast: { boolean: (v) => String(v), date: (v) => v.toISOString() },
  });
}

/** A cache load result carrying CSV (for `respondCached`). */
export function csvResult(csv: string, watermark?: LoadResult['watermark']): LoadResult {
  return { body: csv, contentType: CSV_CONTENT_TYPE, watermark };
}
