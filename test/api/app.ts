/**
 * A real Koa app on 127.0.0.1:0 built by api/server.ts `assembleApp` and served by its
 * `listen`, the functions the production app goes through (pipeline of api/http/kit.ts, error contract, docs, `/livez`,
 * `/readyz`, `/metrics`, one route per endpoint), with, for each of the sixteen endpoints, a
 * stub handler that validates its inputs with the endpoint's schemas and echoes what it
 * parsed. Extra `/v1/test/*` routes drive the cache and the error mapping.
 */
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { ENDPOINTS, type Endpoint } from '../../api/http/endpoints.ts';
import { ApiError } from '../../api/http/errors.ts';
import type { HttpKit } from '../../api/http/kit.ts';
import { parseBody, parsePath, parseQuery } from '../../api/http/params.ts';
import { assembleApp, type EndpointHandlers, listen } from '../../api/server.ts';
import { parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';

export const WATERMARK = '2024-05-01T12:00:00.000Z';

export interface TestApp {
  url: string;
  kit: HttpKit;
  /** Loader calls per `/v1/test/slow` id. */
  loads: Map<string, number>;
  bumpVersion(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The stub of endpoint `e`: parses its path, query and body with the endpoint's schemas and echoes them. */
function echo(e: Endpoint) {
  return async (ctx: Context, kit: HttpKit) => {
    const params = e.params ? parsePath(e.params, ctx) : {};
    const query = parseQuery(e.query, ctx);
    if (e.body) {
      ctx.body = { data: { params, query, body: parseBody(e.body, ctx) } };
      return;
    }
    if (e.key === 'GET /token-holders' && ctx.query.fail !== undefined)
      throw new Error('boom at /secret/path.ts');
    await kit.respond(ctx, async () => ({ body: { data: { params, query } }, watermark: WATERMARK }));
  };
}

/** The probe routes: a slow counted load (`fail` throws, `ms` its duration), a large body, and one throw per error kind. */
function probes(router: Router, kit: HttpKit, loads: Map<string, number>, version: () => number): void {
  router.get('/v1/test/slow', async (ctx) => {
    const id = String(ctx.query.id ?? '');
    await kit.respond(ctx, async () => {
      loads.set(id, (loads.get(id) ?? 0) + 1);
      // `ms`: how long the load takes (default 50), long enough for a test's concurrent requests
      // to all arrive while it runs, even on a loaded machine.
      await sleep(Number(ctx.query.ms ?? 50));
      if (id === 'fail') throw new VaultstreamError('STORE_UNAVAILABLE', 'store down');
      return { body: { data: { id, version: version() } }, watermark: 1_714_564_800 };
    });
  });
  router.get('/v1/test/big', async (ctx) => {
    await kit.respond(ctx, async () => ({
      body: { data: Array.from({ length: 2000 }, (_, i) => ({ i, name: `row-${i}`, value: i * 1.5 })) },
    }));
  });
  router.get('/v1/test/throw/:kind', (ctx) => {
    const kind = ctx.params.kind;
    if (kind === 'store-down') throw new VaultstreamError('STORE_UNAVAILABLE', 'connect ECONNREFUSED');
    if (kind === 'not-found') throw new VaultstreamError('NOT_FOUND', 'unknown vault: nope');
    if (kind === 'reverted') throw new ApiError('SIMULATION_REVERTED', 'execution reverted: NotAuthorized()');
    if (kind === 'string') throw 'a thrown string';
    throw new TypeError('cannot read x of undefined');
  });
}

/** Starts the app; `api` is the raw `api` config section (defaults fill the rest). */
export async function startTestApp(
  opts: { api?: Record<string, unknown>; clock?: () => number; fast?: boolean } = {},
) {
  const cfg = parseConfig({ api: opts.api ?? {} });
  let version = 1;
  const loads = new Map<string, number>();
  const handlers: EndpointHandlers<HttpKit> = Object.fromEntries(ENDPOINTS.map((e) => [e.key, echo(e)]));
  const { app, kit } = assembleApp({
    api: cfg.api,
    dataVersion: () => version,
    clock: opts.clock,
    handlers,
    handlerDeps: (k) => k,
    ready: () => true,
    extraRoutes: (router, k) => probes(router, k, loads, () => version),
    // As the server does: repeated cached answers skip Koa (api/http/fast.ts); `fast: false` keeps them in it.
    fast: opts.fast,
  });

  // As production serves it: the server-level edges (api/http/edges.ts) included.
  const server = await listen(app, '127.0.0.1', 0);
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    kit,
    loads,
    bumpVersion: () => {
      version++;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  } satisfies TestApp;
}

/** Fetches JSON; returns status, headers and the parsed body (or the text when it is not JSON). */
export async function getJson(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}
