/** Metrics of the event stream (GET /v1/events), on the registry of the thread serving the API. */
import { Counter, Gauge } from 'prom-client';
import { registry } from '../../core/metrics.ts';

export const eventMetrics = {
  clients: new Gauge({
    name: 'vaultstream_events_clients',
    help: 'Event streams (GET /v1/events) open now',
    registers: [registry],
  }),
  versions: new Counter({
    name: 'vaultstream_events_versions_total',
    help: 'Data versions published to the event streams',
    registers: [registry],
  }),
  dropped: new Counter({
    name: 'vaultstream_events_dropped_total',
    help: 'Event streams dropped because their client did not read (api.events.clientBufferBytes)',
    registers: [registry],
  }),
  refused: new Counter({
    name: 'vaultstream_events_refused_total',
    help: 'Event streams refused: api.events.maxClients or maxClientsPerAddress open already',
    labelNames: ['limit'] as const,
    registers: [registry],
  }),
};
