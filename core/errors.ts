/**
 * One base error for the whole service. `code` comes from a closed list so callers
 * (retry loops, the API's error mapper) switch on it instead of matching strings.
 */
export const ERROR_CODES = [
  'CONFIG_INVALID',
  'CONFIG_NOT_FOUND',
  'PORT_IN_USE',
  'SQL_SYNTAX',
  'FILE_NOT_FOUND',
  'DECODE_FAILED',
  'VALIDATION_FAILED',
  'SCHEMA_UNKNOWN',
  'STORE_UNAVAILABLE',
  'STORE_QUERY_FAILED',
  'BUS_UNAVAILABLE',
  'MIGRATION_FAILED',
  'READ_ONLY',
  'NOT_FOUND',
  'BAD_INPUT',
  'TIMEOUT',
  /** A chain's RPC cannot be reached or answers HTTP errors (rpc/evm-transport.ts). */
  'RPC_UNAVAILABLE',
  /** A chain's RPC asks to slow down (HTTP 429, JSON-RPC -32005 outside eth_getLogs). */
  'RPC_RATE_LIMITED',
  /** A chain's RPC refuses an eth_getLogs range as too large (the caller narrows it). */
  'RPC_RANGE_TOO_LARGE',
  /** A chain's RPC answered a JSON-RPC error (a revert, bad params): an answer, not an outage. */
  'RPC_ERROR',
  'INTERNAL',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<ErrorCode> = new Set([
  'STORE_UNAVAILABLE',
  'BUS_UNAVAILABLE',
  'TIMEOUT',
  'RPC_UNAVAILABLE',
  'RPC_RATE_LIMITED',
]);

export interface VaultstreamErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  retryable?: boolean;
  hint?: string;
}

export class VaultstreamError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;
  /** What the operator can do about it (printed after the message by the CLI). */
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, opts: VaultstreamErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = 'VaultstreamError';
    this.code = code;
    this.retryable = opts.retryable ?? RETRYABLE.has(code);
    this.details = opts.details;
    this.hint = opts.hint;
  }
}

/** True when the error (or anything in its cause chain) is marked retryable. */
export function isRetryable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    if (e instanceof VaultstreamError) return e.retryable;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The first error in `err`'s cause chain that matches `pred`. */
function findCause(err: unknown, pred: (e: any) => boolean): any {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    if (pred(e)) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A ClickHouse syntax error (code 62) as one readable line: where it failed and a few of the expected tokens. */
function syntaxMessage(text: string): string | undefined {
  const m = /Syntax error[^:]*:\s*(.*?)(?:\s*In scope .*)?(?:\s*\(SYNTAX_ERROR\).*)?$/s.exec(text);
  if (!m && !/\bCode: 62\b|\bSYNTAX_ERROR\b/.test(text)) return undefined;
  let detail = (m?.[1] ?? text).replace(/\s+/g, ' ').trim();
  const expected = /^(.*?)\s*Expected (one of: )?(.*?)[.:]?$/.exec(detail);
  if (expected) {
    const items = expected[3].split(/, /);
    const shown = items.length > 8 ? `${items.slice(0, 8).join(', ')}, …` : items.join(', ');
    detail = `${expected[1]} Expected ${expected[2] ?? ''}${shown}`;
  }
  return `syntax error in the SQL: ${detail}`;
}

export interface DescribeOptions {
  /** The setting that chose each listening port (e.g. 8123: `sql.http.port in the config file`). */
  portSettings?: Record<number, string>;
  /** The configured ClickHouse server URL: a refused connection to it is STORE_UNAVAILABLE. */
  storeUrl?: string;
}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
};

/** Whether a network error is about `url` (same port, or the host that was not found). */
function aboutUrl(e: any, url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  if (e.port !== undefined) return Number(e.port) === port;
  return e.hostname === u.hostname;
}

/**
 * Turns the mistakes an operator makes into their own error with a hint: a port already
 * taken, a SQL syntax error. Any other `VaultstreamError` is returned as it is; anything
 * else becomes `INTERNAL`.
 */
export function describeError(err: unknown, opts: DescribeOptions = {}): VaultstreamError {
  const inUse = findCause(err, (e) => e?.code === 'EADDRINUSE');
  if (inUse) {
    const where = inUse.port !== undefined ? `${inUse.address ?? ''}:${inUse.port}` : errorMessage(inUse);
    return new VaultstreamError(
      'PORT_IN_USE',
      `cannot listen on ${where}: the port is in use by another process`,
      {
        cause: err,
        details: { address: inUse.address, port: inUse.port },
        hint: `stop the other process, or choose another port: ${
          (inUse.port !== undefined && opts.portSettings?.[inUse.port]) ||
          'api.port in the config file, or API_PORT=<port>'
        }`,
      },
    );
  }
  const storeUrl = opts.storeUrl;
  const down = storeUrl ? findCause(err, (e) => e?.code in UNREACHABLE && aboutUrl(e, storeUrl)) : undefined;
  if (down && storeUrl)
    return new VaultstreamError(
      'STORE_UNAVAILABLE',
      `cannot reach the ClickHouse server at ${storeUrl}: ${UNREACHABLE[down.code]}`,
      {
        cause: err,
        hint: 'start it, or correct store.url / CLICKHOUSE_URL (empty: the embedded chDB under dataDir)',
      },
    );
  const missing = findCause(err, (e) => e?.code === 'ENOENT' && typeof e.path === 'string');
  if (missing && !(err instanceof VaultstreamError))
    return new VaultstreamError('FILE_NOT_FOUND', `no such file: ${missing.path}`, {
      cause: err,
      hint: `check the path (a relative one is read from ${process.cwd()})`,
    });
  const syntax = findCause(err, (e) => syntaxMessage(errorMessage(e)) !== undefined);
  if (syntax && !(err instanceof VaultstreamError && err.code === 'READ_ONLY'))
    return new VaultstreamError('SQL_SYNTAX', syntaxMessage(errorMessage(syntax)) as string, {
      cause: err,
      hint: 'check the SQL at that position; the tables, views and columns are listed in docs/views.md',
    });
  if (err instanceof VaultstreamError) return err;
  return new VaultstreamError('INTERNAL', errorMessage(err), { cause: err });
}
