/**
 * The events of the last data versions, as sent (docs/architecture.md#live-events): what every
 * stream writes from, and what a reconnecting client's `Last-Event-ID` is replayed from. One list
 * shared by every client (each holds a position in it, not a copy), bounded by the versions and
 * the bytes it keeps: the oldest versions go first, whole, and the newest is always kept.
 */

/** One event, its SSE frame ready to write. */
export interface LoggedEvent {
  /** Its place in the log (counts every event appended, from 0). */
  seq: number;
  /** The SSE `id:`: the data version (a version event) or `<version>:<n>` (its n-th activity event). */
  id: string;
  kind: 'version' | 'activity';
  /** The vaults it is about (a filter by vault sends it when one of them is asked for). */
  vaults: readonly string[];
  /** True when it may concern every vault (a version whose changes are not known). */
  everyVault: boolean;
  frame: Buffer;
}

export type NewEvent = Omit<LoggedEvent, 'seq'>;

export class EventLog {
  private events: LoggedEvent[] = [];
  /** Index in `events` of the oldest kept (the ones before are evicted, compacted now and then). */
  private start = 0;
  private nextSeq = 0;
  private bytes = 0;
  private versions = 0;
  private readonly byId = new Map<string, number>();

  constructor(private readonly limits: { versions: number; bytes: number }) {}

  /** The seq the next event appended gets. */
  get end(): number {
    return this.nextSeq;
  }

  /** The seq of the oldest event kept (`end` when none). */
  get first(): number {
    return this.start < this.events.length ? this.events[this.start].seq : this.nextSeq;
  }

  /** Bytes of the frames kept. */
  get size(): number {
    return this.bytes;
  }

  /** Appends one version's events, its version event last; evicts the oldest versions past the bounds. */
  append(events: readonly NewEvent[]): void {
    for (const e of events) {
      const logged = { ...e, seq: this.nextSeq++ };
      this.events.push(logged);
      this.byId.set(e.id, logged.seq);
      this.bytes += e.frame.length;
      if (e.kind === 'version') this.versions++;
    }
    while ((this.versions > this.limits.versions || this.bytes > this.limits.bytes) && this.versions > 1)
      this.evictVersion();
    if (this.start > 1024 && this.start * 2 > this.events.length) {
      this.events = this.events.slice(this.start);
      this.start = 0;
    }
  }

  /** The seq right after the event `id`; undefined when it is not kept (evicted, or never this run's). */
  after(id: string): number | undefined {
    const seq = this.byId.get(id);
    return seq === undefined ? undefined : seq + 1;
  }

  /** The event at `seq`, if kept. */
  at(seq: number): LoggedEvent | undefined {
    const i = this.start + (seq - this.first);
    return i >= this.start && i < this.events.length ? this.events[i] : undefined;
  }

  private evictVersion(): void {
    while (this.start < this.events.length) {
      const e = this.events[this.start++];
      this.byId.delete(e.id);
      this.bytes -= e.frame.length;
      if (e.kind === 'version') {
        this.versions--;
        return;
      }
    }
  }
}
