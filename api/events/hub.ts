/**
 * The server-sent events of GET /v1/events (docs/architecture.md#live-events), on the thread that
 * serves the API, fed by the data versions it is told of (api/thread/worker.ts; cli/roles.ts for
 * an API on the main thread) with what each changed (api/events/changes.ts). For each version, in
 * order: the activity rows it brought (api/events/activity.ts), then one `version` event with the
 * stored watermarks and what changed. Both go to the shared log (api/events/log.ts) every client
 * writes from (api/events/stream.ts). The reads are two short statements per version at most; a
 * version arriving while one is read waits, and several waiting become one (their changes merged).
 */
import type { ServerResponse } from 'node:http';
import type { Config } from '../../core/config.ts';
import { errorMessage } from '../../core/errors.ts';
import { type Logger, silentLogger } from '../../core/log.ts';
import type { Store } from '../../store/client.ts';
import type { RecentTransaction } from '../read/activity-transactions.ts';
import { loadWatermarks } from '../read/activity-watermark.ts';
import { ActivityWatch } from './activity.ts';
import type { Changes } from './changes.ts';
import { EventLog, type NewEvent } from './log.ts';
import { eventMetrics } from './metrics.ts';
import { type EventFilter, EventStream } from './stream.ts';

/** The data of a `version` event. */
export interface VersionEvent {
  version: string;
  /** Chain id -> newest stored block (Solana: slot); null when the read failed. */
  watermarks: Record<string, number> | null;
  /** What changed; null when not known (the API-only role, or too much at once): refetch what you show. */
  changed: { vaults: string[]; tokenHolders: boolean; mintFlows: string[] } | null;
}

/** The data of a `reset` event: the events after the client's Last-Event-ID are not kept. */
export interface ResetEvent {
  version: string;
  reason: string;
}

const frame = (id: string | undefined, event: string, data: unknown) =>
  Buffer.from(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

/** Two changes as one (a version that waited for another). */
function merged(a: Changes | null, b: Changes | null): Changes | null {
  if (a === null || b === null) return null;
  const union = (x: string[], y: string[]) => [...new Set([...x, ...y])].sort();
  return {
    vaults: union(a.vaults, b.vaults),
    activity: union(a.activity, b.activity),
    tokenHolders: a.tokenHolders || b.tokenHolders,
    mintFlows: union(a.mintFlows, b.mintFlows),
  };
}

export class EventHub {
  readonly log: EventLog;
  private readonly streams = new Set<EventStream>();
  private readonly activity: ActivityWatch;
  private readonly settings: Config['api']['events'];
  private readonly logger: Logger;
  private version: string;
  /** The version waiting to be read and its changes (merged when several wait). */
  private queued: { version: string; changes: Changes | null } | undefined;
  private running: Promise<void> | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly store: Store,
    opts: { settings: Config['api']['events']; version: string; clock?: () => number; log?: Logger },
  ) {
    this.settings = opts.settings;
    this.logger = opts.log ?? silentLogger;
    this.version = opts.version;
    this.log = new EventLog({ versions: opts.settings.replayVersions, bytes: opts.settings.replayBytes });
    this.activity = new ActivityWatch(store, opts.clock ?? Date.now);
    // Retried by the first version's read. A store not migrated yet (an API-only process started
    // before the consumers) has nothing to announce: not a failure.
    this.activity.start().catch((err) => {
      const code = String((err as { code?: unknown }).code);
      if (code === '60' || code === '81') this.logger.debug('events: nothing stored yet');
      else this.logger.warn({ err: errorMessage(err) }, 'events: first activity read failed');
    });
    this.heartbeat = setInterval(() => {
      for (const s of this.streams) s.send(': heartbeat\n\n');
    }, opts.settings.heartbeatSeconds * 1000);
    this.heartbeat.unref();
  }

  /** Streams open now. */
  get clients(): number {
    return this.streams.size;
  }

  /** A new data version and what it changed (null: not known). */
  push(version: string, changes: Changes | null): void {
    if (this.closed) return;
    this.queued = this.queued
      ? { version, changes: merged(this.queued.changes, changes) }
      : { version, changes };
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once every version pushed so far is in the log (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /**
   * Serves one client on `res` from `lastEventId` (its Last-Event-ID, else from now): the headers,
   * `retry:`, then a `reset` event when that id is not kept, then what follows it.
   */
  open(res: ServerResponse, filter: EventFilter, lastEventId: string | undefined): EventStream {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      // Proxies that buffer (nginx) pass the events on as they come.
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setNoDelay(true);
    const from = lastEventId === undefined ? this.log.end : this.log.after(lastEventId);
    const stream: EventStream = new EventStream(res, this.log, filter, from ?? this.log.end, {
      bufferBytes: this.settings.clientBufferBytes,
      onDrop: (why) => {
        eventMetrics.dropped.inc();
        this.logger.info({ why }, 'events: a client that does not read was dropped');
      },
      onClose: () => {
        this.streams.delete(stream);
        eventMetrics.clients.set(this.streams.size);
      },
    });
    this.streams.add(stream);
    eventMetrics.clients.set(this.streams.size);
    stream.send(`retry: ${this.settings.retryMs}\n\n`);
    if (from === undefined) {
      const reset: ResetEvent = {
        version: this.version,
        reason: `the events after ${lastEventId} are not kept (older than the last ${this.settings.replayVersions} versions, or of another run): read what you show again`,
      };
      stream.send(frame(undefined, 'reset', reset).toString());
    }
    stream.pump();
    return stream;
  }

  /** Ends every stream and stops (shutdown). */
  close(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const s of this.streams) s.end();
  }

  private async drain(): Promise<void> {
    while (this.queued && !this.closed) {
      const { version, changes } = this.queued;
      this.queued = undefined;
      await this.publish(version, changes);
    }
  }

  /** Reads what the version needs, appends its events and wakes every stream. */
  private async publish(version: string, changes: Changes | null): Promise<void> {
    const events: NewEvent[] = [];
    if (changes?.activity.length) {
      try {
        const rows = await this.activity.fresh(changes.activity);
        rows.forEach(({ vault, row }, i) => {
          events.push({
            id: `${version}:${i + 1}`,
            kind: 'activity',
            vaults: [vault],
            everyVault: false,
            frame: frame(`${version}:${i + 1}`, 'activity', row satisfies RecentTransaction),
          });
        });
      } catch (err) {
        // Their rows are not seen yet: the next look at those vaults finds them.
        this.logger.warn({ err: errorMessage(err) }, 'events: reading the new activity failed');
      }
    }
    let watermarks: VersionEvent['watermarks'] = null;
    try {
      const marks = await loadWatermarks(this.store);
      watermarks = Object.fromEntries([...marks].sort((a, b) => a[0] - b[0]).map(([c, m]) => [c, m.block]));
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'events: reading the watermarks failed');
    }
    const changed = changes && {
      vaults: changes.vaults,
      tokenHolders: changes.tokenHolders,
      mintFlows: changes.mintFlows,
    };
    const data: VersionEvent = { version, watermarks, changed };
    events.push({
      id: version,
      kind: 'version',
      vaults: changes?.vaults ?? [],
      everyVault: changes === null,
      frame: frame(version, 'version', data),
    });
    this.version = version;
    const from = this.log.end;
    this.log.append(events);
    eventMetrics.versions.inc();
    for (const s of this.streams) s.appended(from);
  }
}
