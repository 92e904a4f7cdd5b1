/**
 * The parts of ClickHouse's HTTP protocol the SQL interface (`server.ts`) speaks: error names and
 * their HTTP statuses, the error body, which URL parameters are settings and which settings a
 * client may send, content types per output format, and which formats can be streamed.
 */
export const VERSION = '26.7.2.1';

/** ClickHouse error names of the codes this interface answers with. */
export const CODE_NAMES: Record<number, string> = {
  16: 'NO_SUCH_COLUMN_IN_TABLE',
  27: 'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
  36: 'BAD_ARGUMENTS',
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
  168: 'TOO_BIG_AST',
  209: 'SOCKET_TIMEOUT',
  202: 'TOO_MANY_SIMULTANEOUS_QUERIES',
  241: 'MEMORY_LIMIT_EXCEEDED',
  394: 'QUERY_WAS_CANCELLED',
  432: 'CANNOT_DECOMPRESS',
  638: 'UNKNOWN_COMPRESSION_METHOD',
  396: 'TOO_MANY_ROWS_OR_BYTES',
  452: 'SETTING_CONSTRAINT_VIOLATION',
  456: 'UNKNOWN_QUERY_PARAMETER',
  497: 'ACCESS_DENIED',
  516: 'AUTHENTICATION_FAILED',
  1000: 'POCO_EXCEPTION',
  1001: 'STD_EXCEPTION',
};

/**
 * HTTP status per ClickHouse error code. ClickHouse's own server answers 500 for most engine
 * errors; here every error a query can cause is the client's (4xx): a timeout, a cap reached, a
 * too-deep query, an engine error on a valid-looking query. 500 is left for this server's own
 * failures (1001) and 503 for an engine that cannot take queries.
 */
export function httpStatus(code: number): number {
  if (code === 516) return 401;
  if (code === 164 || code === 497) return 403;
  if (code === 60 || code === 81 || code === 404) return 404;
  if (code === 202 || code === 210) return 503;
  if (code === 1000) return 413;
  if (code === 1001) return 500;
  return 400;
}

export class ClickHouseHttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The HTTP status, when the code alone does not say it (an unknown path is 404). */
    readonly status = httpStatus(code),
    /** The engine's name for the code, when the error came from the engine. */
    readonly name = CODE_NAMES[code] ?? 'UNKNOWN_EXCEPTION',
  ) {
    super(message);
  }
}

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

export function errorBody(
  code: number,
  message: string,
  name = CODE_NAMES[code] ?? 'UNKNOWN_EXCEPTION',
): string {
  return `Code: ${code}. DB::Exception: ${message}. (${name}) (version ${VERSION})\n`;
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

/**
 * How a format's answer can be sent as the engine streams it. chDB's stream formats each chunk as
 * an answer of its own: formats of rows only concatenate ('rows'); those with a header of names
 * (and types) repeat it per chunk, which is kept once ('names': that many header lines, or the
 * RowBinary header); documents (JSON, XML, Pretty, Parquet, ...) do not concatenate at all and
 * are run whole (undefined), bounded by the query's max_memory_usage, which the engine counts
 * the formatted answer against.
 */
export function streamForm(
  format: string,
): { header: 'none' | 'lines' | 'binary'; lines: number } | undefined {
  if (
    /^(TabSeparated|TSV|TSVRaw|TabSeparatedRaw|CSV|JSONEachRow|JSONLines|NDJSON|JSONCompactEachRow|JSONStringsEachRow|JSONCompactStringsEachRow|Native|RowBinary|LineAsString|RawBLOB|Raw|TSKV|BSONEachRow|MsgPack|Null)$/i.test(
      format,
    )
  )
    return { header: 'none', lines: 0 };
  const named =
    /^(TabSeparated|TSV|TSVRaw|TabSeparatedRaw|CSV|JSONCompactEachRow|JSONCompactStringsEachRow|RowBinary|Raw)(WithNames|WithNamesAndTypes)$/i.exec(
      format,
    );
  if (!named) return undefined;
  const lines = named[2].toLowerCase() === 'withnames' ? 1 : 2;
  return { header: /^RowBinary$/i.test(named[1]) ? 'binary' : 'lines', lines };
}

/** The length of a RowBinaryWithNames(AndTypes) header (`lists` lists of names) at the start of `b`. */
export function binaryHeaderLength(b: Buffer, lists: number): number {
  let at = 0;
  const varint = () => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const byte = b[at++];
      if (byte === undefined) throw new Error('RowBinary header cut short');
      v += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return v;
      shift += 7;
    }
  };
  const n = varint();
  for (let list = 0; list < lists; list++)
    for (let i = 0; i < n; i++) {
      const len = varint();
      at += len;
    }
  if (at > b.length) throw new Error('RowBinary header cut short');
  return at;
}
