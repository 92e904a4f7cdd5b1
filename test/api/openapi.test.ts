import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINTS, endpoint } from '../../api/http/endpoints.ts';
import { eventsQuery, objectOf } from '../../api/http/params.ts';
import { responseBodies } from '../../api/http/responses.ts';
import { getJson, startTestApp, type TestApp } from './app.ts';

let app: TestApp;
let doc: any;
beforeAll(async () => {
  app = await startTestApp();
  const res = await getJson(`${app.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  doc = res.body;
});
afterAll(() => app.close());

const SPEC_PATHS = [
  'GET /token-holders',
  'GET /solana/mint-status/{signature}',
  'GET /vaults',
  'GET /vaults/details',
  'GET /vaults/{slug}',
  'GET /vaults/{slug}/details-lite',
  'GET /vaults/{slug}/performance-history',
  'GET /vaults/apy-history',
  'GET /vaults/recent-transactions',
  'GET /vaults/{slug}/failed-redemptions',
  'GET /vaults/{slug}/roles-assignments',
  'GET /vaults/{slug}/holders-history',
  'GET /vaults/holders-history',
  'GET /vaults/holders',
  'GET /vaults/fees',
  'POST /auto-claim/build-tx',
];
/** Beyond the specification: the live events (api/events/). */
const STREAMS = ['GET /events'];

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document under /v1', async () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.servers[0].url).toBe('/v1');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has each of the 16 endpoints with every parameter of its schema', () => {
    const ops = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops.sort()).toEqual([...SPEC_PATHS, ...STREAMS].sort());
    const resolve = (p: any) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p);
    for (const e of ENDPOINTS) {
      const op = doc.paths[e.path][e.method.toLowerCase()];
      const declared = op.parameters.map((p: any) => `${resolve(p).in}:${resolve(p).name}`).sort();
      const pathParams = [...e.path.matchAll(/\{(\w+)\}/g)].map((m) => `path:${m[1]}`);
      const queryParams = Object.keys(objectOf(e.query)?.shape ?? {}).map((n) => `query:${n}`);
      // Every GET also takes `meta` (api/http/provenance.ts).
      const meta = e.method === 'GET' ? ['query:meta'] : [];
      expect(declared).toEqual([...pathParams, ...queryParams, ...meta].sort());
      for (const p of op.parameters.filter((x: any) => x.in === 'path')) expect(p.required).toBe(true);
      expect(op.responses['200'].content['application/json'].schema.$ref).toMatch(
        /^#\/components\/schemas\/\w+Response$/,
      );
      expect(op.responses['400']).toBeDefined();
    }
    expect(Object.keys(responseBodies)).toHaveLength(16);
    expect(endpoint('GET /vaults/{slug}/details-lite').routerPath).toBe('/vaults/:slug/details-lite');
  });

  it('documents the parameter rules', () => {
    const param = (key: string, name: string) => {
      const [method, path] = key.split(' ');
      return doc.paths[path][method.toLowerCase()].parameters.find((p: any) => p.name === name);
    };
    expect(param('GET /vaults/recent-transactions', 'limit').schema).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
    });
    expect(param('GET /vaults', 'status').schema.enum).toEqual([
      'active',
      'disabled',
      'coming_soon',
      'hidden',
      'all',
    ]);
    expect(param('GET /vaults', 'live')).toMatchObject({ deprecated: true, schema: { type: 'boolean' } });
    expect(param('GET /vaults/fees', 'slug')).toMatchObject({
      style: 'form',
      explode: true,
      schema: { type: 'array' },
    });
    expect(param('GET /vaults/fees', 'endDate').schema.format).toBe('date');
    expect(param('GET /vaults/{slug}/failed-redemptions', 'user').schema.pattern).toBe('^0x[a-fA-F0-9]+$');
    expect(param('GET /vaults/apy-history', 'chainId').schema.default).toBe(98866);
    expect(param('GET /vaults/{slug}/roles-assignments', 'cursor').deprecated).toBe(true);
    expect(param('GET /vaults/{slug}', 'slug')).toMatchObject({ required: true, schema: { minLength: 1 } });
    const body = doc.paths['/auto-claim/build-tx'].post.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required.sort()).toEqual(['chainId', 'enabled', 'user']);
    expect(body.properties.chainId.enum).toEqual([98866, 1, 8453, 56, 9745, 43114]);
    expect(body.properties.skipSimulation.default).toBe(false);
  });

  it('documents GET /events: its query, the three events, curl -N and EventSource examples', () => {
    const op = doc.paths['/events'].get;
    const params = op.parameters.map((p: any) => `${p.in}:${p.name}`).sort();
    expect(params).toEqual(
      ['header:Last-Event-ID', ...Object.keys(eventsQuery.shape).map((n) => `query:${n}`)].sort(),
    );
    expect(op.responses['200'].content['text/event-stream'].example).toMatch(/^retry: \d+\n/);
    expect(op.description).toMatch(/curl -N '?http:\/\/[^ ]+\/v1\/events/);
    expect(op.description).toContain("new EventSource('/v1/events");
    for (const name of ['VersionEvent', 'ActivityEvent', 'ResetEvent'])
      expect(doc.components.schemas[name], name).toBeDefined();
    expect(op.responses['503'].description).toContain('TOO_MANY_STREAMS');
  });

  it('resolves every $ref', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of refs) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce((o: any, k) => o?.[k], doc);
      expect(target, ref).toBeDefined();
    }
  });

  it('states the units and formulas of docs/architecture.md, Units and formulas', () => {
    const text = JSON.stringify(doc);
    for (const phrase of [
      'in USD',
      'in percent (5.25 means 5.25%)',
      "share price in the vault's base asset",
      'decimal-adjusted tokens',
      'rolling7d = (P(d)/P(d-7) - 1) * 365/7 * 100',
      'sec30d = 2 * ((P(d)/P(d-30))^6 - 1) * 100',
      'sec30d = 2 * ((1 + rolling30d/100 * 30/365)^6 - 1) * 100',
      'renormalised to 100',
      'Legacy alias of compositionApy',
      '(tvl now / tvl 30 days ago - 1) * 100',
      'liquidFunds / tvl * 100',
      'max(0, pendingRedemptionsValue - liquidFunds)',
      'totalSupply * accountant rate * base-asset USD price',
      'settled day',
      'sampled at the end of every hour',
      'The 100 largest (chain, user) balances',
      'ROLE_<n>',
      'endCursor: null, hasNextPage: false',
      'Days with nothing are 0',
      'one calendar year before',
      'Default 30 days ago',
      '`status` wins',
      '\\"5/7\\"',
      'eth_call',
      'Solana is 101',
    ])
      expect(text, phrase).toContain(phrase);
  });
});

describe('/docs', () => {
  it('is Swagger UI over the document, every asset served by this process', async () => {
    const res = await fetch(`${app.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    const urls = [...html.matchAll(/\b(?:src|href|action)\s*=\s*"([^"]*)"/gi)].map((m) => m[1]);
    expect(urls).toEqual(
      expect.arrayContaining([
        '/docs/assets/swagger-ui.css',
        '/docs/assets/swagger-ui-bundle.js',
        '/docs/assets/docs.js',
        '/v1/openapi.json',
      ]),
    );
    // Same-origin paths only (and the empty icon): nothing from another host.
    for (const u of urls) expect(u, u).toMatch(/^(\/(?!\/)|data:,$)/);
    expect(html).not.toMatch(/https?:\/\/|@import|url\(/i);
    for (const u of urls.filter((x) => x.startsWith('/docs/assets/'))) {
      const asset = await fetch(`${app.url}${u}`);
      expect(asset.status, u).toBe(200);
      expect(asset.headers.get('content-type'), u).toMatch(/javascript|css/);
      expect((await asset.arrayBuffer()).byteLength, u).toBeGreaterThan(100);
    }
    // The start reads the document of this service and sends nothing to Swagger's validator.
    const init = await (await fetch(`${app.url}/docs/assets/docs.js`)).text();
    expect(init).toContain("url: '/v1/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    expect((await fetch(`${app.url}/docs/assets/nope.js`)).status).toBe(404);
  });

  it('answers 304 to its ETag', async () => {
    const first = await fetch(`${app.url}/docs`);
    const again = await fetch(`${app.url}/docs`, {
      headers: { 'if-none-match': first.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });
});

describe('/metrics', () => {
  it('has request latency per route template and cache lookups', async () => {
    await getJson(`${app.url}/v1/vaults/some-slug-123/details-lite`);
    await getJson(`${app.url}/v1/vaults/some-slug-123/details-lite`);
    const text = await (await fetch(`${app.url}/metrics`)).text();
    expect(text).toMatch(
      /vaultstream_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/vaults\/:slug\/details-lite"[^}]*\}/,
    );
    expect(text).toMatch(
      /vaultstream_api_cache_lookups_total\{route="\/v1\/vaults\/:slug\/details-lite",result="hit"\} 1/,
    );
    // No metric that nothing records.
    expect(text).not.toContain('vaultstream_store_query_duration_seconds');
    expect(text).not.toContain('some-slug-123');
  });
});
