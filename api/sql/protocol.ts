/**
 * The parts of ClickHouse's HTTP protocol the SQL interface (`server.ts`) speaks: error names and
 * their HTTP statuses, the error body, which URL parameters are settings and which settings a
 * client may send, content types per output format, and which formats can be streamed.
 */
import type { QueryLimits } from '../../store/read-only.ts';

export const VERSION = '26.7.2.1';

/** ClickHouse error names of the codes this interface answers with. */
export const CODE_NAMES: Record<number, string> = {
  16: 'NO_SUCH_COLUMN_IN_TABLE',
  42: 'NUMBER_OF_ARGUMENTS_DOESNT_MATCH',
  43: 'ILLEGAL_TYPE_OF_ARGUMENT',
  46: 'UNKNOWN_FUNCTION',
  47: 'UNKNOWN_IDENTIFIER',
  53: 'TYPE_MISMATCH',
  60: 'UNKNOWN_TABLE',
  62: 'SYNTAX_ERROR',
  73: 'UNKNOWN_FORMAT',
  81: 'UNKNOWN_DATABASE',
  115: 'UNKNOWN_SETTING',
  159: 'TIMEOUT_EXCEEDED',
  164: 'READONLY',
  202: 'TOO_MANY_SIMULTANEOUS_QUERIES',
  241: 'MEMORY_LIMIT_EXCEEDED',
  394: 'QUERY_WAS_CANCELLED',
  432: 'CANNOT_DECOMPRESS',
  638: 'UNKNOWN_COMPRESSION_METHOD',
  396: 'TOO_MANY_ROWS_OR_BYTES',
  456: 'UNKNOWN_QUERY_PARAMETER',
  516: 'AUTHENTICATION_FAILED',
  1000: 'POCO_EXCEPTION',
  1001: 'STD_EXCEPTION',
};

/** HTTP status per ClickHouse error code, as ClickHouse's own server maps them. */
export function httpStatus(code: number): number {
  if (code === 516) return 401;
  if (code === 164 || code === 497) return 403;
  if (code === 60 || code === 81) return 404;
  if (code === 202) return 503;
  if ([16, 27, 36, 42, 43, 46, 47, 53, 62, 73, 115, 432, 456, 638].includes(code)) return 400;
  if (code === 1000) return 413;
  return 500;
}

export class ClickHouseHttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** Settings about how results are written: harmless, passed on to the engine. */
export const OUTPUT_SETTINGS =
  /^(output_format_\w+|format_\w+|date_time_output_format|precise_float_parsing|join_use_nulls)$/;
/** Settings that only shape the HTTP exchange: accepted, and handled here or ignored. */
export const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'http_zlib_compression_level',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'wait_end_of_query',
  'http_response_buffer_size',
  'cancel_http_readonly_queries_on_client_close',
  'http_write_exception_in_output_format',
  'add_http_cors_header',
  'extremes',
]);
/** URL parameters that are not settings. */
export const NOT_SETTINGS = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'user',
  'password',
  'quota_key',
  'session_id',
  'session_timeout',
  'session_check',
  'compress',
  'decompress',
  'buffer_size',
]);
/** Caps a client may lower with a URL setting, and the limit each one lowers. */
export const CAPS: Record<string, keyof QueryLimits> = {
  max_execution_time: 'maxExecutionTimeSeconds',
  max_result_rows: 'maxResultRows',
  max_result_bytes: 'maxResultBytes',
  max_memory_usage: 'maxMemoryUsageBytes',
};

export const CONTENT_TYPES: [RegExp, string][] = [
  [
    /^JSON(EachRow|Lines|StringsEachRow|CompactEachRow\w*|ObjectEachRow)$/i,
    'application/x-ndjson; charset=UTF-8',
  ],
  [/^JSON/i, 'application/json; charset=UTF-8'],
  [/^(TabSeparated|TSV)/i, 'text/tab-separated-values; charset=UTF-8'],
  [/^CSV/i, 'text/csv; charset=UTF-8'],
  [
    /^(Native|RowBinary\w*|Parquet|Arrow\w*|ORC|Avro|MsgPack|Protobuf\w*|CapnProto|BSONEachRow)$/i,
    'application/octet-stream',
  ],
];

export function contentType(format: string): string {
  for (const [re, type] of CONTENT_TYPES) if (re.test(format)) return type;
  return 'text/plain; charset=UTF-8';
}

/**
 * Formats whose blocks concatenate into one valid result: these run as a stream that a client's
 * disconnect cancels between blocks. Others (JSON, the WithNames formats, Parquet, ...) run in
 * one call, which chDB cannot interrupt: their time cap bounds them.
 */
export const STREAMABLE =
  /^(JSONEachRow|JSONLines|NDJSON|JSONCompactEachRow|JSONStringsEachRow|JSONCompactStringsEachRow|TabSeparated|TSV|TabSeparatedRaw|TSVRaw|CSV|Native|RowBinary|LineAsString|RawBLOB)$/i;

export function errorBody(code: number, message: string): string {
  return `Code: ${code}. DB::Exception: ${message}. (${CODE_NAMES[code] ?? 'UNKNOWN_EXCEPTION'}) (version ${VERSION})\n`;
}

/** Rows in a line-per-row result (0 for other formats, which the summary cannot count cheaply). */
export function resultRows(bytes: Buffer, format: string): number {
  if (
    !/^(JSONEachRow|JSONLines|JSONCompactEachRow|JSONStringsEachRow|TabSeparated|TSV|TSVRaw|TabSeparatedRaw|CSV)$/i.test(
      format,
    )
  )
    return 0;
  let n = 0;
  for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) n++;
  return n;
}
