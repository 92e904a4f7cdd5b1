/**
 * GET /v1/events in the OpenAPI document (api/events/ serves it): the query of
 * `eventsQuery`, the three events and their data (named components), and how to read the stream
 * with curl and a browser's EventSource. Not an `ENDPOINTS` row: it answers a stream, not a cached
 * `{ data }`.
 */
import { z } from 'zod';
import { eventsQuery } from './params.ts';
import { named, recentTransaction } from './resources.ts';

export const versionEvent = named(
  'VersionEvent',
  z
    .object({
      version: z.string().meta({ description: 'The data version (also the event `id:`).' }),
      watermarks: z.record(z.string(), z.number().int()).nullable().meta({
        description:
          'Chain id -> newest stored block (Solana: slot) when the event was made; null when they could not be read.',
      }),
      changed: z
        .object({
          vaults: z.array(z.string()).meta({
            description:
              'Slugs of the vaults whose data changed with this version: events of theirs stored, or their metrics settled.',
          }),
          tokenHolders: z.boolean().meta({
            description:
              'GET /token-holders may answer otherwise (transfers, rates, redemptions or the registry stored).',
          }),
          mintFlows: z.array(z.string()).meta({
            description:
              'Solana signatures of the mint flows with new steps (GET /solana/mint-status/{signature}).',
          }),
        })
        .nullable()
        .meta({
          description:
            'What changed; null when it is not known (an API process without the consumers, or too much at once): read again what you show.',
        }),
    })
    .meta({
      description:
        'event: version. One per data version, after the activity events of that version: read again what `changed` names.',
    }),
);

export const activityEvent = named(
  'ActivityEvent',
  recentTransaction.meta({
    description:
      'event: activity. A new row of GET /vaults/recent-transactions, with exactly its fields: at most the 100 newest rows of a vault per version (a version with more, as in a backfill, names the vault in its version event). Fee claims are not activity rows: they change the vault (`changed.vaults`, GET /vaults/fees).',
  }),
);

export const resetEvent = named(
  'ResetEvent',
  z.object({ version: z.string(), reason: z.string() }).meta({
    description:
      'event: reset. The events after the given Last-Event-ID are not kept (older than the last `api.events.replayVersions` versions, or of an earlier run of the service): read again what you show; the stream goes on from now.',
  }),
);

const DESCRIPTION = [
  'Server-sent events (`text/event-stream`): clients learn of new data without polling.',
  '',
  '- `event: activity` (`ActivityEvent`), `id: <version>:<n>`: each new activity row, with the fields GET /vaults/recent-transactions answers.',
  '- `event: version` (`VersionEvent`), `id: <version>`: one per data version, after its activity events: the stored watermarks per chain and what changed.',
  '- `event: reset` (`ResetEvent`): the `Last-Event-ID` given is not kept; the stream goes on from now.',
  '',
  'A reconnecting client sends `Last-Event-ID` (an `EventSource` does it by itself) and gets what it missed: the events of the last `api.events.replayVersions` versions (default 1,000) are kept. A comment line comes every `api.events.heartbeatSeconds` (15 s); `retry:` says how long to wait before reconnecting. At most `api.events.maxClients` streams are open (default 1,000; more: 503 `TOO_MANY_STREAMS` with `Retry-After`); a client that does not read is dropped once `api.events.clientBufferBytes` of events wait for it.',
  '',
  '```sh',
  "curl -N 'http://127.0.0.1:3000/v1/events?vault=ndev0&types=versions,activity'",
  "curl -N -H 'Last-Event-ID: <id of the last event seen>' http://127.0.0.1:3000/v1/events",
  '```',
  '',
  '```js',
  "const es = new EventSource('/v1/events?vault=ndev0');",
  "es.addEventListener('version', (e) => { const v = JSON.parse(e.data); if (v.changed === null || v.changed.vaults.includes('ndev0')) refetch(); });",
  "es.addEventListener('activity', (e) => showTransaction(JSON.parse(e.data)));",
  "es.addEventListener('reset', () => refetchEverything());",
  '```',
].join('\n');

const EXAMPLE = [
  'retry: 3000',
  '',
  'id: mj1k2x3.1520.88:1',
  'event: activity',
  'data: {"transactionHash":"0x5e…","logIndex":3,"transactionType":"DEPOSIT","vaultAddress":"0xcf7e…","user":"0x70997970…","createdAt":1764633600,"shares":12.5,"sharesTokenAddress":"0xcf7e…","assets":12.61,"assetsTokenAddress":"0x5fbd…","chainId":98866}',
  '',
  'id: mj1k2x3.1520.88',
  'event: version',
  'data: {"version":"mj1k2x3.1520.88","watermarks":{"1":5678,"56":901,"98866":1234},"changed":{"vaults":["ndev0"],"tokenHolders":true,"mintFlows":[]}}',
  '',
  ': heartbeat',
  '',
].join('\n');

/** The OpenAPI parameters of the query (`types` is comma-separated, not repeated). */
function parameters(
  param: (name: string, schema: z.ZodType) => Record<string, unknown>,
): Record<string, unknown>[] {
  return Object.entries(eventsQuery.shape).map(([name, schema]) => {
    const p = param(name, schema as z.ZodType);
    return name === 'types' ? { ...p, style: 'form', explode: false } : p;
  });
}

/** The path item of GET /events; `param` renders one query parameter as the other operations do. */
export function eventsPathItem(param: (name: string, schema: z.ZodType) => Record<string, unknown>) {
  return {
    get: {
      operationId: 'streamEvents',
      summary: 'Live events: each new data version and activity row',
      description: DESCRIPTION,
      tags: ['events'],
      parameters: [
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          description: 'The `id:` of the last event received: the stream resumes after it.',
          schema: { type: 'string' },
        },
        ...parameters(param),
      ],
      responses: {
        200: {
          description:
            'The event stream, open until the client or the service ends it. Each event: `id:`, `event:` and `data:` (JSON of the schema named by its `event:`: VersionEvent, ActivityEvent, ResetEvent).',
          content: { 'text/event-stream': { schema: { type: 'string' }, example: EXAMPLE } },
        },
        400: { $ref: '#/components/responses/BadRequest' },
        429: { $ref: '#/components/responses/RateLimited' },
        503: {
          description:
            'Too many event streams are open (`api.events.maxClients`, or `maxClientsPerAddress` for this client): retry after `Retry-After` seconds. Codes: TOO_MANY_STREAMS (503).',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  };
}
