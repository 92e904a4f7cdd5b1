/**
 * One base error for the whole service. `code` comes from a closed list so callers
 * (retry loops, the API's error mapper) switch on it instead of matching strings.
 */
export const ERROR_CODES = [
  'CONFIG_INVALID',
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
  'INTERNAL',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['STORE_UNAVAILABLE', 'BUS_UNAVAILABLE', 'TIMEOUT']);

export interface VaultstreamErrorOptions {
  details?: Record<string, unknown>;
  cause?: unknown;
  retryable?: boolean;
}

export class VaultstreamError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, opts: VaultstreamErrorOptions = {}) {
    super(message, { cause: opts.cause });
    this.name = 'VaultstreamError';
    this.code = code;
    this.retryable = opts.retryable ?? RETRYABLE.has(code);
    this.details = opts.details;
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
