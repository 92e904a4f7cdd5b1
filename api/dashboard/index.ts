/**
 * The dashboard: a page at `/` with per-vault charts (TVL, share price, navApy and
 * compositionApy, holders, fees, deposits/withdrawals per day) and the pipeline, drawn
 * with uPlot served from this process (no CDN: the page works offline), and `/status`
 * as a readable page for clients that prefer `text/html`.
 *
 * The page reads the API's own `/v1` endpoints and `/status`; deposits and withdrawals
 * per day, which no `/v1` endpoint answers per day, come from `GET /dashboard/api/flows/{slug}`
 * (the documented `volume_daily` view), and the holders per chain right now from
 * `GET /dashboard/api/holders/{slug}` (the `balances` view): holders-history samples ended hours
 * only, so a chain whose holders all arrived this hour (Solana on a fresh devnet) had no line.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Store } from '../../store/client.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const UPLOT_DIST = join(dirname(createRequire(import.meta.url).resolve('uplot')), '..', 'dist');

/** Files under `/dashboard/assets/`: name -> [path, content type]. */
const ASSETS: Record<string, [string, string]> = {
  'uPlot.iife.min.js': [join(UPLOT_DIST, 'uPlot.iife.min.js'), 'application/javascript; charset=utf-8'],
  'uPlot.min.css': [join(UPLOT_DIST, 'uPlot.min.css'), 'text/css; charset=utf-8'],
  'charts.js': [join(HERE, 'assets', 'charts.js'), 'application/javascript; charset=utf-8'],
  'app.js': [join(HERE, 'assets', 'app.js'), 'application/javascript; charset=utf-8'],
  'dashboard.css': [join(HERE, 'assets', 'dashboard.css'), 'text/css; charset=utf-8'],
};

/** True when the client's `Accept` prefers HTML to JSON (a browser), unless `?format=json`. */
export function prefersHtml(ctx: Context): boolean {
  if (ctx.query.format === 'json') return false;
  return ctx.accepts('json', 'html') === 'html';
}

const SLUG = /^[A-Za-z0-9_.-]{1,64}$/;

/** The slug of a dashboard API path, or a 400 answered (false). */
function slugOf(ctx: Context): string | false {
  const slug = ctx.params.slug;
  if (SLUG.test(slug)) return slug;
  ctx.status = 400;
  ctx.body = { error: 'slug: letters, digits, _ . - (at most 64)', code: 'INVALID_PARAMETER' };
  return false;
}

/** Adds `/`, `/dashboard/assets/*` and `/dashboard/api/{flows,holders}/:slug` to `router`. */
export function mountDashboard(router: Router, deps: { store: Store }): void {
  const page = readFileSync(join(HERE, 'assets', 'index.html'));
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, [path, type]] of Object.entries(ASSETS))
    files.set(name, { body: readFileSync(path), type });

  router.get('/', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = page;
  });
  router.get('/dashboard/assets/:name', (ctx) => {
    const file = files.get(ctx.params.name);
    if (!file) {
      ctx.status = 404;
      ctx.body = { error: `no dashboard asset ${ctx.params.name}`, code: 'NOT_FOUND' };
      return;
    }
    ctx.type = file.type;
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = file.body;
  });
  router.get('/dashboard/api/flows/:slug', async (ctx) => {
    const slug = slugOf(ctx);
    if (slug === false) return;
    const db = deps.store.database;
    const rows = await deps.store.query<Record<string, string | number>>(
      `SELECT toUnixTimestamp(toDateTime(day, 'UTC')) AS day, deposits, withdrawals,
         toFloat64(deposits_usd_e18) / 1e18 AS depositsUsd, toFloat64(withdrawals_usd_e18) / 1e18 AS withdrawalsUsd
       FROM ${db}.volume_daily WHERE vault = {slug:String} ORDER BY day`,
      { slug },
    );
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = {
      data: rows.map((r) => ({
        day: Number(r.day),
        deposits: Number(r.deposits),
        withdrawals: Number(r.withdrawals),
        depositsUsd: Number(r.depositsUsd),
        withdrawalsUsd: Number(r.withdrawalsUsd),
      })),
    };
  });
  router.get('/dashboard/api/holders/:slug', async (ctx) => {
    const slug = slugOf(ctx);
    if (slug === false) return;
    const rows = await deps.store.query<{ chainId: number | string; holders: number | string }>(
      `SELECT chain_id AS chainId, count() AS holders FROM ${deps.store.database}.balances
       WHERE vault = {slug:String} AND balance_raw > 0 GROUP BY chain_id ORDER BY chain_id`,
      { slug },
    );
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = {
      data: {
        at: Math.floor(Date.now() / 1000),
        chains: rows.map((r) => ({ chainId: Number(r.chainId), holders: Number(r.holders) })),
      },
    };
  });
}
