/**
 * One client's event stream (docs/architecture.md#live-events): a position in the shared event
 * log (api/events/log.ts) and what the client asked for. Events are written from that position as
 * fast as the connection takes them, several to one write, and never faster: once the socket
 * holds more than its buffer, writing waits for `drain`, so a connection never buffers more than
 * one write. What waits meanwhile is only the position. A client that does not read falls
 * behind: once the events it has not taken since it connected pass `bufferBytes`, or the log
 * evicted one it had not been sent, it is dropped (the socket destroyed). Nothing one client does
 * delays another, the API or the pipeline: a write is one call on a socket that takes it.
 */
import type { ServerResponse } from 'node:http';
import type { EventLog, LoggedEvent } from './log.ts';

/** What a client asked for (`GET /v1/events?vault=...&types=...`). */
export interface EventFilter {
  /** Only events about these vaults; null: every vault. */
  vaults: ReadonlySet<string> | null;
  versions: boolean;
  activity: boolean;
}

/** Most bytes put in one write (a replay goes out in writes of about this size). */
const WRITE_BYTES = 65_536;

export class EventStream {
  /** The seq of the next event to consider. */
  private cursor: number;
  /** Seq from which events count as live (appended after the client connected, not its replay). */
  private readonly liveFrom: number;
  /** Bytes of the live events it asked for that are not written yet. */
  private pending = 0;
  private waiting = false;
  private closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly log: EventLog,
    readonly filter: EventFilter,
    from: number,
    private readonly opts: { bufferBytes: number; onDrop: (why: string) => void; onClose: () => void },
  ) {
    this.cursor = from;
    this.liveFrom = log.end;
    res.on('drain', () => {
      this.waiting = false;
      this.pump();
    });
    res.once('close', () => {
      this.closed = true;
      opts.onClose();
    });
  }

  /** True when the client asked for `e`. */
  wants(e: LoggedEvent): boolean {
    if (e.kind === 'version' ? !this.filter.versions : !this.filter.activity) return false;
    const vaults = this.filter.vaults;
    return vaults === null || e.everyVault || e.vaults.some((v) => vaults.has(v));
  }

  /** Writes a frame now (the opening, a heartbeat), unless the connection is taking no more. */
  send(frame: string): void {
    if (this.closed || this.waiting) return;
    if (!this.res.write(frame)) this.waiting = true;
  }

  /** New events were appended from `from` (the old end of the log): count them, then write. */
  appended(from: number): void {
    if (this.closed) return;
    for (let seq = Math.max(from, this.liveFrom); seq < this.log.end; seq++) {
      const e = this.log.at(seq);
      if (e && this.wants(e)) this.pending += e.frame.length;
    }
    this.pump();
    if (this.pending > this.opts.bufferBytes)
      this.drop('its unread events passed api.events.clientBufferBytes');
  }

  /** Writes what the client is owed, while the connection takes it. */
  pump(): void {
    if (this.closed || this.waiting) return;
    if (this.cursor < this.log.first) {
      this.drop('the events it had not been sent left the log');
      return;
    }
    while (this.cursor < this.log.end) {
      const frames: Buffer[] = [];
      let bytes = 0;
      while (this.cursor < this.log.end && bytes < WRITE_BYTES) {
        const e = this.log.at(this.cursor) as LoggedEvent;
        if (this.cursor >= this.liveFrom && this.wants(e)) this.pending -= e.frame.length;
        this.cursor++;
        if (!this.wants(e)) continue;
        frames.push(e.frame);
        bytes += e.frame.length;
      }
      if (!frames.length) continue;
      if (!this.res.write(frames.length === 1 ? frames[0] : Buffer.concat(frames, bytes))) {
        this.waiting = true;
        return;
      }
    }
  }

  /** Ends the stream (shutdown): the client reconnects elsewhere, or here once the service is back. */
  end(): void {
    if (!this.closed) this.res.end();
  }

  private drop(why: string): void {
    if (this.closed) return;
    this.closed = true;
    this.res.destroy();
    this.opts.onDrop(why);
  }
}
