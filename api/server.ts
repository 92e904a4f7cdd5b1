/**
 * The Koa application: operations endpoints now; the specification's endpoints
 * under /v1 are added by the API routes.
 */
import type { Server } from 'node:http';
import Router from '@koa/router';
import Koa from 'koa';
import type { Bus } from '../bus/types.ts';
import { errorMessage } from '../core/errors.ts';
import { type Logger, silentLogger } from '../core/log.ts';
import { registry } from '../core/metrics.ts';
import type { Store } from '../store/client.ts';
import { pipelineStatus } from './status.ts';

export interface ApiDeps {
  store: Store;
  bus?: { bus: Bus; groupId: string; topics: string[] };
  log?: Logger;
  /** True once migrations ran (and, with ingesters, chains caught up). */
  ready: () => boolean;
}

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  const router = new Router();
  const log = deps.log ?? silentLogger;
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      log.error({ err: errorMessage(err), path: ctx.path }, 'request failed');
      ctx.status = 500;
      ctx.body = { error: 'internal error', code: 'INTERNAL' };
    }
  });
  router.get('/livez', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const ok = deps.ready();
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'starting' };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  router.get('/status', async (ctx) => {
    ctx.body = await pipelineStatus(deps.store, deps.bus);
  });
  app.use(router.routes()).use(router.allowedMethods());
  return app;
}

export function listen(app: Koa, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}
