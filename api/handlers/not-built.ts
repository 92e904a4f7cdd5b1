/**
 * Until the process is first ready, an endpoint whose data readiness still waits for answers
 * 503 `NOT_READY` with readiness's reasons for it, not an empty or zero answer: the endpoints
 * read from the metrics tables wait for the settle of what a backfill stored (readiness's
 * `metrics` reason), GET /token-holders for its snapshot of the data the process is ready with
 * (the `token-holders` condition, api/snapshot-readiness.ts). Endpoints that read the stored
 * events as they are (transactions, failed redemptions, roles, mint status) build nothing and
 * always answer.
 *
 * Once the process has been ready, every endpoint answers what is stored (each with its
 * watermark header), whatever readiness says later: the data is built by then, and a lagging
 * chain is `/readyz`'s to report. Readiness is asked at most once per request (its answer is
 * reused for a second, api/readiness.ts), and no more once ready.
 */

import { ApiError } from '../http/errors.ts';
import type { EndpointKey } from '../http/responses.ts';
import { TOKEN_HOLDERS_SNAPSHOT } from '../snapshot-readiness.ts';
import type { Handler, HandlerDeps, HandlerMap } from './types.ts';

/** Readiness's reason prefix for the metrics tables (api/readiness.ts, `settled`). */
const METRICS = 'metrics';

/** What each endpoint is built from, by the prefix of readiness's reasons about it. */
const BUILT_FROM: Partial<Record<EndpointKey, readonly string[]>> = {
  'GET /token-holders': [TOKEN_HOLDERS_SNAPSHOT],
  'GET /vaults': [METRICS],
  'GET /vaults/{slug}': [METRICS],
  'GET /vaults/details': [METRICS],
  'GET /vaults/{slug}/details-lite': [METRICS],
  'GET /vaults/apy-history': [METRICS],
  'GET /vaults/{slug}/performance-history': [METRICS],
  'GET /vaults/holders': [METRICS],
  'GET /vaults/holders-history': [METRICS],
  'GET /vaults/{slug}/holders-history': [METRICS],
  'GET /vaults/fees': [METRICS],
};

/** The apps (by their handler deps) that have been ready: their endpoints answer from then on. */
const beenReady = new WeakSet<HandlerDeps>();

/** Throws the 503 while `data` is not built, before the app's process is first ready. */
async function requireBuilt(deps: HandlerDeps, data: readonly string[]): Promise<void> {
  if (!deps.readiness || beenReady.has(deps)) return;
  const report = await deps.readiness.check();
  if (report.status === 'ready') {
    beenReady.add(deps);
    return;
  }
  const reasons = report.reasons.filter((r) => data.some((d) => r.startsWith(`${d}:`)));
  if (reasons.length)
    throw new ApiError('NOT_READY', `not built yet: ${reasons.join('; ')}`, {
      details: { reasons },
      headers: { 'Retry-After': '5' },
    });
}

/** `handlers`, each endpoint of BUILT_FROM answering 503 until its data is built. */
export function untilBuilt(handlers: HandlerMap): HandlerMap {
  const out: HandlerMap = { ...handlers };
  for (const [key, data] of Object.entries(BUILT_FROM) as [EndpointKey, readonly string[]][]) {
    const handler = handlers[key];
    if (!handler) continue;
    const gated: Handler = async (ctx, deps) => {
      await requireBuilt(deps, data);
      await handler(ctx, deps);
    };
    out[key] = gated;
  }
  return out;
}
