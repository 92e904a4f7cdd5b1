/**
 * The Koa application: the request pipeline of api/http (metrics, compression, the
 * error contract, rate limiting, body parsing), the OpenAPI document and docs page,
 * the operations endpoints, and one route per endpoint of `ENDPOINTS` answered by
 * its handler in `api/handlers/`.
 */
import type { Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import type { Bus } from '../bus/types.ts';
import type { Config } from '../core/config.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { registry } from '../core/metrics.ts';
import type { Store } from '../store/client.ts';
import { mountDashboard, prefersHtml, statusPage } from './dashboard/index.ts';
import { tokenHolderSnapshotsOf } from './handlers/holders.ts';
import { HANDLERS } from './handlers/index.ts';
import type { HandlerDeps } from './handlers/types.ts';
import { ENDPOINTS } from './http/endpoints.ts';
import { createHttpKit } from './http/kit.ts';
import type { Readiness } from './readiness.ts';
import { pipelineStatus } from './status.ts';

export interface ApiDeps {
  store: Store;
  config: Config;
  /** Milliseconds since the epoch (default `Date.now`). */
  clock?: () => number;
  /** Changes whenever new data lands; keys the response cache. */
  dataVersion: () => number | string;
  bus?: { bus: Bus; groupId: string; topics: string[] };
  log?: Logger;
  /** Ingesters' progress (backfill per chain, Solana followers) for `/status`. */
  ingestProgress?: () => Record<string, unknown>;
  /** The mint-flow tracker, for on-demand lookups of unknown signatures. */
  mintFlow?: HandlerDeps['mintFlow'];
  /** A fixed readiness answer (stand-in apps); used only when `readiness` is absent. */
  ready?: () => boolean;
  /** The `/readyz` check (api/readiness.ts): migrations, chain phases, stored watermark lag. */
  readiness?: Pick<Readiness, 'check'>;
}

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  const router = new Router();
  const log = deps.log ?? silentLogger;
  const kit = createHttpKit({ api: deps.config.api, version: deps.dataVersion, log, clock: deps.clock });
  const handlerDeps: HandlerDeps = {
    store: deps.store,
    config: deps.config,
    kit,
    // Notes its reads: a cache key chosen after one (a time-relative default) is replayed within its second only.
    clock: kit.fast.clock,
    log,
    mintFlow: deps.mintFlow,
    dataVersion: deps.dataVersion,
  };
  tokenHolderSnapshotsOf(handlerDeps); // builds the first GET /token-holders snapshot now
  for (const e of ENDPOINTS) {
    const handler = HANDLERS[e.key];
    if (handler) router.register(`/v1${e.routerPath}`, [e.method], (ctx) => handler(ctx, handlerDeps));
  }
  for (const m of kit.middleware) app.use(m);
  kit.mountDocs(router);
  router.get('/livez', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    if (deps.readiness) {
      const report = await deps.readiness.check();
      ctx.status = report.status === 'ready' ? 200 : 503;
      ctx.body = report;
      return;
    }
    const ok = deps.ready?.() ?? false;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'not_ready', reasons: ok ? [] : ['not started'] };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  router.get('/status', async (ctx) => {
    const body = { ...(await pipelineStatus(deps.store, deps.bus)), ingest: deps.ingestProgress?.() ?? null };
    ctx.vary('Accept');
    if (prefersHtml(ctx)) {
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = statusPage(body);
      return;
    }
    ctx.body = body;
  });
  mountDashboard(router, { store: deps.store });
  app.use(router.routes()).use(router.allowedMethods());
  kit.fast.install(app); // cached answers replayed before Koa (api/http/fast.ts)
  return app;
}

export function listen(app: Koa, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}
