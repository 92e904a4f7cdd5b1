/**
 * The settings a SQL client may send (URL parameters, as ClickHouse's HTTP interface takes
 * them): deny by default. A setting passes only when this file names it: the cosmetic options of
 * output formats, time zones, the HTTP exchange's own options (progress headers,
 * `wait_end_of_query`, compression), protocol and client versions. Caps (`max_execution_time`,
 * `max_result_rows`, ...) asked above the server's limit are lowered to it, never lifted.
 * Nothing that names a file, a URL, a schema source, a registry or a cache is on the list
 * (`format_schema*`, `output_format_schema`, `format_avro_schema_registry_url`,
 * `format_template_*`, `use_query_cache`, ...): those are what let a "read-only" query read and
 * write the server's files and send requests.
 */
import type { QueryLimits } from '../../store/read-only.ts';
import { literal } from '../../store/tsv.ts';
import { ClickHouseHttpError } from './protocol.ts';

type Check = (value: string) => boolean;

const bool: Check = (v) => /^(0|1|true|false)$/i.test(v);
const uint =
  (max: number): Check =>
  (v) =>
    /^\d{1,12}$/.test(v) && Number(v) <= max;
/** One of `values`, in any case; the engine takes it as written here (api/sql/settings.ts spelling). */
const oneOf = (...values: string[]): Check & { values: string[] } =>
  Object.assign((v: string) => values.some((x) => x.toLowerCase() === v.toLowerCase()), { values });
/** A short text (delimiters, null representations, a table name for SQLInsert): a string even when it is digits. */
const text = Object.assign((v: string) => v.length <= 64 && !/[\0\r]/.test(v), { text: true });
/** An IANA time zone name (the engine checks that it exists). */
const timeZone: Check = (v) => /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(v);

/** Settings passed on to the engine, with the values each may take. */
export const ENGINE_SETTINGS: Record<string, Check> = {
  // Time zones and date/time output.
  session_timezone: (v) => v === '' || timeZone(v),
  use_client_time_zone: bool,
  date_time_output_format: oneOf('simple', 'iso', 'unix_timestamp'),
  // How a query's DateTime literals are read (clickhouse-connect sends it when a session may set settings).
  date_time_input_format: oneOf('basic', 'best_effort', 'best_effort_us'),
  output_format_orc_writer_time_zone_name: timeZone,
  // JSON formats.
  output_format_json_quote_64bit_integers: bool,
  output_format_json_quote_64bit_floats: bool,
  output_format_json_quote_decimals: bool,
  output_format_json_quote_denormals: bool,
  output_format_json_escape_forward_slashes: bool,
  output_format_json_named_tuples_as_objects: bool,
  output_format_json_skip_null_value_in_named_tuples: bool,
  output_format_json_array_of_rows: bool,
  output_format_json_validate_utf8: bool,
  output_format_json_map_as_array_of_tuples: bool,
  output_format_json_pretty_print: bool,
  output_format_write_statistics: bool,
  // Text formats.
  output_format_decimal_trailing_zeros: bool,
  output_format_always_write_decimal_point_in_float_and_decimal: bool,
  output_format_csv_crlf_end_of_line: bool,
  output_format_tsv_crlf_end_of_line: bool,
  output_format_csv_serialize_tuple_into_separate_columns: bool,
  output_format_values_escape_quote_with_quote: bool,
  output_format_trim_fixed_string: bool,
  output_format_markdown_escape_special_characters: bool,
  format_csv_delimiter: Object.assign((v: string) => v.length === 1, { text: true }),
  format_csv_null_representation: text,
  format_tsv_null_representation: text,
  format_custom_escaping_rule: oneOf('Escaped', 'Quoted', 'CSV', 'JSON', 'XML', 'Raw'),
  format_custom_field_delimiter: text,
  format_custom_row_before_delimiter: text,
  format_custom_row_after_delimiter: text,
  format_custom_row_between_delimiter: text,
  format_custom_result_before_delimiter: text,
  format_custom_result_after_delimiter: text,
  output_format_sql_insert_table_name: (v) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(v),
  output_format_sql_insert_include_column_names: bool,
  output_format_sql_insert_use_replace: bool,
  output_format_sql_insert_quote_names: bool,
  // Pretty formats.
  output_format_pretty_row_numbers: bool,
  output_format_pretty_color: oneOf('0', '1', 'auto'),
  output_format_pretty_grid_charset: oneOf('utf-8', 'ascii'),
  output_format_pretty_max_rows: uint(1_000_000),
  output_format_pretty_max_column_pad_width: uint(1000),
  output_format_pretty_max_value_width: uint(100_000),
  output_format_pretty_highlight_digit_groups: bool,
  output_format_pretty_multiline_fields: bool,
  output_format_pretty_display_footer_column_names: bool,
  // Binary formats.
  output_format_arrow_string_as_string: bool,
  output_format_arrow_low_cardinality_as_dictionary: bool,
  output_format_arrow_fixed_string_as_fixed_byte_array: bool,
  output_format_arrow_compression_method: oneOf('lz4_frame', 'zstd', 'none'),
  output_format_parquet_string_as_string: bool,
  output_format_parquet_fixed_string_as_fixed_byte_array: bool,
  output_format_parquet_compression_method: oneOf('snappy', 'lz4', 'brotli', 'zstd', 'gzip', 'none'),
  output_format_parquet_version: oneOf('1.0', '2.4', '2.6', '2.latest'),
  output_format_orc_string_as_string: bool,
  output_format_orc_compression_method: oneOf('lz4', 'snappy', 'zlib', 'zstd', 'none'),
  output_format_avro_codec: oneOf('null', 'deflate', 'snappy', 'zstd'),
  output_format_bson_string_as_string: bool,
  output_format_msgpack_uuid_representation: oneOf('bin', 'str', 'ext'),
  output_format_native_encode_types_in_binary_format: bool,
  output_format_binary_encode_types_in_binary_format: bool,
  output_format_native_write_json_as_string: bool,
  output_format_binary_write_json_as_string: bool,
  // Query shape a client may choose; none reads or writes outside the query.
  extremes: bool,
  join_use_nulls: bool,
  // Grafana's row limit: caps the rows a query returns (0: no cap beyond the server's).
  limit: uint(1_000_000_000),
  result_overflow_mode: oneOf('throw', 'break'),
  timeout_overflow_mode: oneOf('throw', 'break'),
};

/**
 * Settings about the HTTP exchange or the client itself: accepted, handled by the server or
 * without effect here (the engine runs in this process; there are no roles or quotas).
 */
export const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'http_zlib_compression_level',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'wait_end_of_query',
  'http_wait_end_of_query',
  'http_response_buffer_size',
  'cancel_http_readonly_queries_on_client_close',
  'http_write_exception_in_output_format',
  'http_native_compression_disable_checksumming_on_decompress',
  'add_http_cors_header',
  'client_protocol_version',
  'role',
  // Insert settings JDBC v2 sends with every request: nothing here inserts.
  'async_insert',
  'wait_for_async_insert',
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

/**
 * Caps a client may lower (asked higher, or 0 = no limit, they stay at the server's). A value
 * below the server's goes to the engine as written, which checks it against the cap's bounds
 * (store/read-only-engine.ts) and holds it for the statement; api/sql/lane-worker.ts reads the
 * value in force back before the query runs (`1e-300` is 0, no limit, to the engine: refused).
 */
export const CAPS: Record<string, keyof QueryLimits> = {
  max_execution_time: 'maxExecutionTimeSeconds',
  max_result_rows: 'maxResultRows',
  max_result_bytes: 'maxResultBytes',
  max_memory_usage: 'maxMemoryUsageBytes',
  max_threads: 'maxThreads',
};

/** Words in a refused setting's name that say why (for the message only: refusal is the default). */
const OUTSIDE = /schema|url|uri|file|path|registry|cache|template|dir|disk|s3|hdfs|azure|proxy|host|remote/i;

/** The client's settings as the SETTINGS clause's entries: its lowered caps and output options. */
export function clientSettings(params: URLSearchParams, limits: QueryLimits): string[] {
  const extra: string[] = [];
  for (const [name, value] of params) {
    if (NOT_SETTINGS.has(name) || name.startsWith('param_') || HTTP_SETTINGS.has(name)) continue;
    const cap = CAPS[name];
    if (cap) {
      const n = Number(value);
      if (!/^\d{1,20}(\.\d{1,20})?([eE][-+]?\d{1,4})?$/.test(value) || !Number.isFinite(n))
        throw new ClickHouseHttpError(27, `Cannot parse '${value.slice(0, 64)}' as the value of ${name}`);
      // 0 means "no limit" to ClickHouse, and above the cap is not the client's: the server's cap stays.
      if (n > 0 && n < limits[cap]) extra.push(`${name} = ${value}`);
    } else if (name === 'readonly') {
      if (value !== '1' && value !== '2')
        throw new ClickHouseHttpError(164, "Cannot modify 'readonly' setting in readonly mode");
    } else if (Object.hasOwn(ENGINE_SETTINGS, name)) {
      if (!ENGINE_SETTINGS[name](value))
        throw new ClickHouseHttpError(27, `Cannot parse '${value.slice(0, 64)}' as the value of ${name}`);
      const check = ENGINE_SETTINGS[name] as Check & { values?: string[]; text?: boolean };
      const spelled = check.values?.find((x) => x.toLowerCase() === value.toLowerCase()) ?? value;
      // A number or a flag as a number (`limit` takes no string), any text as a string.
      extra.push(`${name} = ${/^\d+$/.test(spelled) && !check.text ? spelled : literal(spelled)}`);
    } else {
      const shown = name.slice(0, 100).replace(/[^\w.-]/g, '?');
      const why = OUTSIDE.test(name)
        ? ' (it names a file, a URL, a schema source, a registry or a cache)'
        : ' (not on the list of harmless settings this interface accepts)';
      throw new ClickHouseHttpError(164, `Cannot modify '${shown}' setting in readonly mode${why}`);
    }
  }
  return extra;
}
