/**
 * The OpenAPI 3.1 document, generated from the endpoint table and the same zod
 * schemas that validate requests (params.ts) and describe responses
 * (responses.ts), so the document cannot drift from the code.
 */
import { z } from 'zod';
import { ENDPOINTS, type Endpoint } from './endpoints.ts';
import { API_ERROR_STATUS, type ApiErrorCode } from './errors.ts';
import { eventsPathItem } from './events-doc.ts';
import { objectOf } from './params.ts';
import { metaParam } from './provenance.ts';
import { components } from './resources.ts';
import { responseBodies } from './responses.ts';

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  title?: string;
  version?: string;
  /** Base of every path; default `/v1`. */
  serverUrl?: string;
}

const JSON_SCHEMA_OPTS = { target: 'draft-2020-12', unrepresentable: 'any' } as const;

/** A schema's JSON Schema without the `$schema` header (OpenAPI 3.1 uses 2020-12 by default). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { ...JSON_SCHEMA_OPTS, io }) as Json;
  return rest;
}

/** The OpenAPI parameter object of one property of a path or query schema. */
function parameter(name: string, prop: z.ZodType, where: 'path' | 'query'): Json {
  // Parameters are documented by their parsed type (integer, boolean): how the server reads the text.
  const { description, deprecated, ...schemaPart } = jsonSchema(prop, 'output');
  const param: Json = {
    name,
    in: where,
    required: where === 'path' || !prop.safeParse(undefined).success,
    schema: schemaPart,
  };
  if (description) param.description = description;
  if (deprecated) param.deprecated = true;
  if (schemaPart.type === 'array') Object.assign(param, { style: 'form', explode: true });
  return param;
}

/** One OpenAPI parameter object per property of the (path or query) schema. */
function parameters(schema: z.ZodType | undefined, where: 'path' | 'query'): Json[] {
  const shape = schema ? (objectOf(schema)?.shape ?? {}) : {};
  return Object.entries(shape).map(([name, prop]) => parameter(name, prop as z.ZodType, where));
}

/** `?meta=1`, accepted by every GET (api/http/provenance.ts), as one shared parameter. */
const META_PARAMETER: Json = {
  ...parameter('meta', metaParam, 'query'),
  schema: { type: 'string', enum: ['0', '1', 'false', 'true'] },
};

const ERROR_RESPONSES: Record<number, { name: string; description: string; codes: ApiErrorCode[] }> = {
  400: {
    name: 'BadRequest',
    description: 'A parameter or the body is invalid; `details` names every offending parameter.',
    codes: ['BAD_PARAMETER', 'BAD_BODY'],
  },
  404: { name: 'NotFound', description: 'Unknown vault slug or mint signature.', codes: ['NOT_FOUND'] },
  422: {
    name: 'SimulationReverted',
    description: 'The simulated transaction reverted; `error` carries the decoded reason.',
    codes: ['SIMULATION_REVERTED'],
  },
  429: {
    name: 'RateLimited',
    description: 'Too many requests from this client; retry after `Retry-After` seconds.',
    codes: ['RATE_LIMITED'],
  },
  500: { name: 'Internal', description: 'A fault in the service: `{ error, code }`.', codes: ['INTERNAL'] },
  503: {
    name: 'Unavailable',
    description:
      'A data source needed for the answer is down (`UPSTREAM_UNAVAILABLE`), or the service is not ready yet and the data the endpoint serves is not built (`NOT_READY`, `details.reasons` says why); retry later.',
    codes: ['UPSTREAM_UNAVAILABLE', 'NOT_READY'],
  },
};

const SUCCESS_HEADERS: Json = {
  ETag: {
    description: 'Strong validator of the body; send it back in `If-None-Match` to get a 304.',
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description: '`public, max-age=<n>, stale-while-revalidate=<m>`.',
    schema: { type: 'string' },
  },
  'X-Data-Watermark': {
    description: 'Oldest chain watermark (ISO 8601 block time) behind the answer.',
    schema: { type: 'string' },
  },
  'X-Data-Blocks': {
    description:
      'Per chain behind the answer, the newest stored block (Solana: slot) whose events it holds: `98866=1234,1=5678`, by chain id. Answers from the settled metrics give the blocks as their settle saw them.',
    schema: { type: 'string' },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the bucket (when rate limiting is on).',
    schema: { type: 'integer' },
  },
};

function operation(e: Endpoint): Json {
  const ok: Json = { 'application/json': { schema: { $ref: `#/components/schemas/${refId(e)}` } } };
  if (e.csv)
    ok['text/csv'] = { schema: { type: 'string', description: 'Header row, then one row per day.' } };
  const responses: Json = { 200: { description: 'Success.', headers: SUCCESS_HEADERS, content: ok } };
  if (e.method === 'GET')
    responses[304] = { description: 'Not modified (the `If-None-Match` ETag matches).' };
  for (const status of [400, ...e.errors, 429, 500].sort((a, b) => a - b))
    responses[status] = { $ref: `#/components/responses/${ERROR_RESPONSES[status].name}` };
  const op: Json = {
    operationId: e.operationId,
    summary: e.summary,
    description: e.description,
    tags: [e.tag],
    parameters: [
      ...parameters(e.params, 'path'),
      ...parameters(e.query, 'query'),
      ...(e.method === 'GET' ? [{ $ref: '#/components/parameters/Meta' }] : []),
    ],
    responses,
  };
  if (e.body)
    op.requestBody = {
      required: true,
      content: { 'application/json': { schema: jsonSchema(e.body, 'input') } },
    };
  return op;
}

/** The component id of an endpoint's success body. */
function refId(e: Endpoint): string {
  return components.get(responseBodies[e.key])!.id;
}

const UNITS = [
  'Units: `tvl`, `volume24h`, `liquidFunds`, `pendingRedemptionsValue`, `shortfall`, holder `value` and fee values are USD.',
  'APY numbers, `tvl30DayChange`, `liquidFundsRange` and `compositionPct` are percent (5.25 means 5.25%).',
  "`tokenPrice` and history `price` are the share price in the vault's base asset (accountant rate, decimal-adjusted).",
  'Balances and share amounts are decimal-adjusted tokens. Timestamps are Unix seconds unless a field says otherwise.',
  'Errors are `{ error, code, details? }` with `code` from a closed list.',
  'Unknown query parameters are ignored: they are not validated and take no part in the response cache key, which is the validated query (canonical order, defaults applied).',
  'Clients are rate limited (429 `RATE_LIMITED` with `Retry-After` and `RateLimit-*` headers), and so are uncached loads running at once per client.',
  'Errors beyond those listed per operation: 405 `METHOD_NOT_ALLOWED` (with `Allow`), 406 `NOT_ACCEPTABLE` (no acceptable `Accept-Encoding`), 415 `UNSUPPORTED_MEDIA_TYPE` (unknown `Content-Encoding`), 429 `RATE_LIMITED`, 501 `NOT_IMPLEMENTED` (unknown method on an unknown path); before routing, 414 `URI_TOO_LONG` (URL over 8 KiB), 431 `HEADERS_TOO_LARGE` (headers over 16 KiB), 400 `BAD_REQUEST` (malformed HTTP), 408 `REQUEST_TIMEOUT`.',
  '`live` is deprecated everywhere: `status` wins; `live=true` = active, `live=false` = every status but active.',
  'Every answer of stored data says what it stands on: `X-Data-Watermark` (the oldest chain watermark behind it), `X-Data-Blocks` (per chain, the newest block whose events it holds) and, with `?meta=1`, `meta: { watermark, blocks, settledThrough }` beside `data` (the shapes stay as specified without it).',
  'GET /events streams each new data version and activity row as server-sent events: no polling needed.',
].join(' ');

/** Builds the OpenAPI 3.1 document of the sixteen `/v1` endpoints and the event stream. */
export function buildOpenApiDocument(opts: OpenApiOptions = {}): Json {
  const { schemas } = z.toJSONSchema(components, {
    ...JSON_SCHEMA_OPTS,
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  }) as { schemas: Record<string, Json> };
  for (const s of Object.values(schemas)) {
    delete s.$schema;
    delete s.$id;
    delete s.id;
  }
  const paths: Record<string, Json> = {};
  for (const e of ENDPOINTS) paths[e.path] = { ...paths[e.path], [e.method.toLowerCase()]: operation(e) };
  paths['/events'] = eventsPathItem((name, schema) => parameter(name, schema, 'query'));
  const responses = Object.fromEntries(
    Object.values(ERROR_RESPONSES).map((r) => [
      r.name,
      {
        description: `${r.description} Codes: ${r.codes.map((c) => `${c} (${API_ERROR_STATUS[c]})`).join(', ')}.`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  );
  return {
    openapi: '3.1.0',
    info: { title: opts.title ?? 'vaultstream', version: opts.version ?? '1.0.0', description: UNITS },
    servers: [{ url: opts.serverUrl ?? '/v1' }],
    tags: [...new Set([...ENDPOINTS.map((e) => e.tag), 'events'])].map((name) => ({ name })),
    paths,
    components: { schemas, responses, parameters: { Meta: META_PARAMETER } },
  };
}
