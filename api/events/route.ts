/**
 * GET /v1/events (docs/architecture.md#live-events): the query (api/http/params.ts `eventsQuery`),
 * the limits on open streams (`api.events.maxClients`, and per client address
 * `maxClientsPerAddress`: one client cannot take every stream), then the response is the hub's
 * (api/events/hub.ts): Koa leaves it alone (`ctx.respond = false`), so neither compression nor
 * the response cache ever hold an event.
 */
import type Router from '@koa/router';
import type { Config } from '../../core/config.ts';
import { ApiError } from '../http/errors.ts';
import { eventsQuery, parseQuery } from '../http/params.ts';
import { clientKey, isLoopback } from '../http/ratelimit.ts';
import type { EventHub } from './hub.ts';
import { eventMetrics } from './metrics.ts';

const RETRY_AFTER_SECONDS = '5';

/** Adds `GET /v1/events` to `router`, served by `hub`. */
export function mountEvents(router: Router, hub: EventHub, api: Config['api']): void {
  const { maxClients, maxClientsPerAddress } = api.events;
  const perClient = new Map<string, number>();
  router.get('/v1/events', (ctx) => {
    const q = parseQuery(eventsQuery, ctx);
    if (hub.clients >= maxClients) {
      eventMetrics.refused.inc({ limit: 'maxClients' });
      throw new ApiError(
        'TOO_MANY_STREAMS',
        `${maxClients} event streams are open (api.events.maxClients); retry after ${RETRY_AFTER_SECONDS} s`,
        { headers: { 'Retry-After': RETRY_AFTER_SECONDS } },
      );
    }
    const key = clientKey(ctx, api.rateLimit.header);
    const counted = api.rateLimit.limitLoopback || !isLoopback(ctx.ip);
    const held = perClient.get(key) ?? 0;
    if (counted && held >= maxClientsPerAddress) {
      eventMetrics.refused.inc({ limit: 'maxClientsPerAddress' });
      throw new ApiError(
        'TOO_MANY_STREAMS',
        `this client holds ${held} event streams (api.events.maxClientsPerAddress); retry after ${RETRY_AFTER_SECONDS} s`,
        { headers: { 'Retry-After': RETRY_AFTER_SECONDS } },
      );
    }
    if (ctx.method === 'HEAD') {
      ctx.type = 'text/event-stream; charset=utf-8';
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 200;
      return;
    }
    ctx.respond = false;
    if (counted) {
      perClient.set(key, held + 1);
      ctx.res.once('close', () => {
        const left = (perClient.get(key) ?? 1) - 1;
        if (left > 0) perClient.set(key, left);
        else perClient.delete(key);
      });
    }
    const lastEventId = ctx.get('Last-Event-ID') || q.lastEventId;
    hub.open(
      ctx.res,
      {
        vaults: q.vault ? new Set(q.vault) : null,
        versions: q.types.includes('versions'),
        activity: q.types.includes('activity'),
      },
      lastEventId || undefined,
    );
  });
}
