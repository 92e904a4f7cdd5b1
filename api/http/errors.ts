/**
 * The API's error contract (docs/architecture.md, API contract): every error is JSON
 * `{ error, code, details? }` with a code from a closed list, so clients switch on
 * `code`. GET /token-holders needs `{ error: string }` on 500: this body is a
 * superset of it. Bad input never becomes a 5xx, and no body carries a stack trace.
 */
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { errorMessage, isRetryable, VaultstreamError } from '../../core/errors.ts';
import { type Logger, silentLogger } from '../../core/log.ts';

export const API_ERROR_CODES = [
  'BAD_PARAMETER',
  'BAD_BODY',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'UNSUPPORTED_MEDIA_TYPE',
  'SIMULATION_REVERTED',
  'RATE_LIMITED',
  'UPSTREAM_UNAVAILABLE',
  // Before the process is first ready: the data an endpoint serves is not built yet (api/handlers/not-built.ts).
  'NOT_READY',
  // GET /v1/events: api.events.maxClients (or maxClientsPerAddress) streams are open already.
  'TOO_MANY_STREAMS',
  'NOT_IMPLEMENTED',
  'INTERNAL',
  // Refused before routing (api/http/edges.ts).
  'BAD_REQUEST',
  'REQUEST_TIMEOUT',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** The HTTP status of each code. */
export const API_ERROR_STATUS: Record<ApiErrorCode, number> = {
  BAD_PARAMETER: 400,
  BAD_BODY: 400,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SIMULATION_REVERTED: 422,
  RATE_LIMITED: 429,
  UPSTREAM_UNAVAILABLE: 503,
  NOT_READY: 503,
  TOO_MANY_STREAMS: 503,
  NOT_IMPLEMENTED: 501,
  INTERNAL: 500,
  BAD_REQUEST: 400,
  REQUEST_TIMEOUT: 408,
  URI_TOO_LONG: 414,
  HEADERS_TOO_LARGE: 431,
};

/** Where a bad input sits. */
export type IssueLocation = 'query' | 'path' | 'body';

/** One validation problem: the parameter (dotted path, `body` for the body as a whole) and what is wrong. */
export interface Issue {
  in: IssueLocation;
  path: string;
  message: string;
}

/** The body of every error response. */
export interface ErrorBody {
  error: string;
  code: ApiErrorCode;
  details?: unknown;
}

/** An error meant for the client: its message, code and details are sent as they are. */
export class ApiError extends Error {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly details?: unknown;
  /** Extra response headers (e.g. `Retry-After`). */
  readonly headers?: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    message: string,
    opts: { details?: unknown; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = API_ERROR_STATUS[code];
    this.details = opts.details;
    this.headers = opts.headers;
  }
}

/** Converts zod issues into `Issue`s located in `where`. */
export function toIssues(err: z.ZodError, where: IssueLocation): Issue[] {
  const at = (path: PropertyKey[]) => (path.length ? path.map(String).join('.') : where);
  return err.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((k) => ({ in: where, path: at([...i.path, k]), message: 'unknown field' }))
      : [{ in: where, path: at(i.path), message: i.message }],
  );
}

/** A 400 naming every bad parameter: `BAD_BODY` for body issues, else `BAD_PARAMETER`. */
export function validationError(issues: Issue[]): ApiError {
  const body = issues.length > 0 && issues.every((i) => i.in === 'body');
  const names = [...new Set(issues.map((i) => i.path))].join(', ');
  const what = body ? 'invalid request body' : 'invalid parameter';
  return new ApiError(body ? 'BAD_BODY' : 'BAD_PARAMETER', `${what}: ${names}`, { details: issues });
}

/** A 404 for an unknown resource (e.g. `notFound('vault', slug)`). */
export function notFound(what: string, id: string): ApiError {
  return new ApiError('NOT_FOUND', `unknown ${what}: ${id}`);
}

interface HttpLikeError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  expose?: unknown;
  limit?: unknown;
  code?: unknown;
}

/** zlib's errors on a body whose `Content-Encoding` it is not (Z_DATA_ERROR, Z_BUF_ERROR, ...). */
function isZlibError(err: Error & HttpLikeError): boolean {
  return typeof err.code === 'string' && /^(Z_|ERR_ZLIB|ERR__)/.test(err.code) && 'errno' in err;
}

/** Errors raised by body parsing (raw-body, co-body) and `ctx.throw`: they carry an HTTP status. */
function fromHttpError(err: Error & HttpLikeError): ApiError | undefined {
  const status = Number(err.status ?? err.statusCode);
  if (!Number.isInteger(status) || status < 400 || status >= 500) return undefined;
  if (status === 413 || err.type === 'entity.too.large')
    return new ApiError('BAD_BODY', `request body larger than ${Number(err.limit) || 'the'} byte limit`);
  if (err instanceof SyntaxError) return new ApiError('BAD_BODY', 'request body is not valid JSON');
  if (status === 415)
    return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'unsupported request body encoding or type', {
      headers: { 'Accept-Encoding': 'gzip, deflate, br, identity' },
    });
  if (status === 406) return new ApiError('NOT_ACCEPTABLE', 'no acceptable response encoding or type');
  const type = typeof err.type === 'string' ? err.type : '';
  if (type.startsWith('request.') || type.endsWith('.unsupported'))
    return new ApiError('BAD_BODY', 'request body could not be read');
  if (status === 404) return new ApiError('NOT_FOUND', err.expose ? err.message : 'not found');
  if (status === 405) return new ApiError('METHOD_NOT_ALLOWED', 'method not allowed');
  if (status === 429) return new ApiError('RATE_LIMITED', 'too many requests');
  return new ApiError('BAD_PARAMETER', err.expose ? err.message : 'bad request');
}

/** The client-facing form of any thrown value. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof z.ZodError) return validationError(toIssues(err, 'query'));
  if (err instanceof VaultstreamError) {
    if (err.code === 'NOT_FOUND') return new ApiError('NOT_FOUND', err.message);
    if (err.code === 'BAD_INPUT' || err.code === 'VALIDATION_FAILED')
      return new ApiError('BAD_PARAMETER', err.message, { details: err.details });
  }
  if (isRetryable(err))
    return new ApiError('UPSTREAM_UNAVAILABLE', 'a data source is unavailable; retry later', { cause: err });
  if (err instanceof Error) {
    if (isZlibError(err as Error & HttpLikeError))
      return new ApiError('BAD_BODY', 'request body does not match its Content-Encoding');
    const mapped = fromHttpError(err as Error & HttpLikeError);
    if (mapped) return mapped;
  }
  return new ApiError('INTERNAL', 'internal error', { cause: err });
}

/** Writes the error response for `err` on `ctx` (status, JSON body, no caching). */
export function sendError(ctx: Context, err: ApiError): void {
  ctx.status = err.status;
  const body: ErrorBody = { error: err.message, code: err.code };
  if (err.details !== undefined) body.details = err.details;
  ctx.body = body;
  ctx.remove('ETag');
  ctx.remove('Content-Encoding');
  ctx.set('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(err.headers ?? {})) ctx.set(k, v);
}

/**
 * Koa middleware mapping every thrown error to the contract's JSON body, and
 * Koa's bare 404/405 answers (no route, wrong method) to the same shape. Server
 * faults (500, 503) are logged with their cause; client errors are not.
 */
export function errorHandler(opts: { log?: Logger } = {}): Middleware {
  const log = opts.log ?? silentLogger;
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body == null && [404, 405, 501].includes(ctx.status)) {
        // The router answers 501 for a method it does not know (TRACE, PROPFIND): on a known
        // path (it sets `Allow`) that is a 405 like any other method the path lacks.
        const allow = ctx.response.get('Allow');
        sendError(
          ctx,
          ctx.status === 404
            ? new ApiError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`)
            : ctx.status === 405 || allow
              ? new ApiError('METHOD_NOT_ALLOWED', `method ${ctx.method} not allowed`, {
                  headers: allow ? { Allow: allow } : {},
                })
              : new ApiError('NOT_IMPLEMENTED', `method ${ctx.method} not implemented`),
        );
      }
    } catch (err) {
      const apiErr = toApiError(err);
      // Not ready yet is the service's state while it catches up, not a failed request: a client
      // polling through a backfill would otherwise flood the log.
      if (apiErr.code === 'NOT_READY') log.debug({ path: ctx.path }, 'request answered: not ready yet');
      else if (apiErr.status >= 500) log.error({ err: errorMessage(err), path: ctx.path }, 'request failed');
      sendError(ctx, apiErr);
    }
  };
}
