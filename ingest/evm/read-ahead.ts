/**
 * The follower's read pipeline: the logs of one block range and the headers it needs
 * (`range-headers.ts`: those that need no logs are read alongside them, the day-end search
 * among them), then the snapshots of the UTC days that close inside it; while
 * backfilling, the next range's logs are asked for as soon as the current range's are in, and
 * read (its day closes too) while the current one is processed.
 */
import { type BlockStamp, type ChainReader, isHeader, TARGET_LOGS } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import type { RawLog } from './decode.ts';
import type { Emitted } from './map.ts';
import { rangeHeaders } from './range-headers.ts';
import { takeSnapshot } from './snapshots.ts';

const DAY = 86_400;

/** The logs and headers of one block range. */
export interface RangeRead {
  logs: RawLog[];
  /** The last block covered (the sizer may have shrunk the range). */
  to: number;
  /**
   * The blocks the range needs, oldest first: headers read (its first and last block, the reorg
   * window among them) and blocks known from their logs only (no `parentHash`).
   */
  headers: BlockStamp[];
  /**
   * The snapshot reads started for the last block of each UTC day that ends between two of
   * `headers`, by block (a failure is the follower's to report; the day ending at the range's
   * first block is not among them: the previous range's last block closes it). Started from the
   * headers read alongside the logs: a range the provider shrank may hold unused reads past it.
   */
  closes: Map<number, Promise<Emitted[]>>;
}

/** A range being read: `logsTo` once its logs are in, `taken` once the follower asked for it. */
interface Reading {
  from: number;
  head: number;
  read: Promise<RangeRead>;
  logsTo?: number;
  /** How many logs, once they are in. */
  logCount?: number;
  taken: boolean;
}

/**
 * Ranges read ahead of the one taken. Two on a sparse chain: the next range's logs are asked for
 * once the newest range's are in, whether or not the follower has taken it, so a range slow to
 * process (or to publish) does not hold up the logs after it; each range's logs still come one
 * after the other. One once the range ahead holds half of `TARGET_LOGS` logs or more (a dense
 * chain, whose ranges the sizer fills to it: a second one ahead cost the dense backfill bench CPU
 * and wall time, 10.0-10.3 against 9.3-9.8 CPU-s, and held more memory).
 */
const DEPTH = 2;

export class RangeReader {
  /** The ranges after the last one taken, oldest first, being read while it is processed. */
  private readonly ahead: Reading[] = [];
  /** The newest range being read (taken or ahead): the next starts after its end. */
  private newest: Reading | undefined;

  /** The chain's reorg window (`contracts.chain.reorgWindow`): every block of it below the head is read. */
  private readonly window: number;

  constructor(
    private readonly reader: ChainReader,
    private readonly contracts: ChainContracts,
  ) {
    this.window = contracts.chain.reorgWindow;
  }

  /**
   * The range read ahead when it starts at `from`, else a fresh read up to `head` at most. Once
   * the newest range's logs are in, the next range's read starts, up to `DEPTH` ranges ahead of
   * the one taken (while it is processed): the logs of a backfill come one after the other, as a
   * bare client would read them.
   */
  take(from: number, head: number): Promise<RangeRead> {
    let taken = this.ahead[0];
    if (taken?.from === from) this.ahead.shift();
    else {
      this.ahead.length = 0;
      taken = this.start(from, head);
    }
    taken.taken = true;
    this.pump();
    return taken.read;
  }

  /** Starts reading the range from `from`, for the next `take` (unless it is being read already). */
  readAhead(from: number, head: number): void {
    if (this.ahead[0]?.from === from) return;
    this.ahead.length = 0;
    this.ahead.push(this.start(from, head));
  }

  /** Forgets the ranges read ahead (a reorg moved the next block back). */
  drop(): void {
    this.ahead.length = 0;
    this.newest = undefined;
  }

  /** Waits for the ranges still being read ahead (their failures ignored) and forgets them. */
  async settle(): Promise<void> {
    const ahead = this.ahead.splice(0);
    this.newest = undefined;
    await Promise.all(ahead.map((r) => r.read.catch(() => {})));
  }

  /** The read of the range after the newest, once its logs are in, it ends below its head and fewer than `DEPTH` are ahead. */
  private pump(): void {
    const last = this.newest;
    const held = this.ahead.reduce((n, r) => n + (r.logCount ?? 0), 0);
    if (!last || last.logsTo === undefined || last.logsTo >= last.head || this.ahead.length >= DEPTH) return;
    if (this.ahead.length && 2 * held >= TARGET_LOGS) return;
    this.ahead.push(this.start(last.logsTo + 1, last.head));
  }

  /**
   * Logs of the next range from `from` (at most the sizer's range, up to `head`) and the
   * headers it needs: the first and last block, the reorg window below `head` and the last
   * block of each UTC day ending in it (alongside the logs), the blocks holding logs (after). Under an older head than the
   * follower's, a range reads no fewer headers (the head only grows).
   */
  private start(from: number, head: number): Reading {
    const { reader } = this;
    const reading: Reading = { from, head, taken: false, read: Promise.resolve(undefined as never) };
    this.newest = reading;
    reading.read = (async () => {
      const want = Math.min(head, from + reader.sizer.size - 1);
      const windowFrom = head - this.window + 1;
      // The snapshot read of each day close (the last block of a UTC day, followed by the next
      // day's first), started once: as soon as the headers show it.
      const closes = new Map<number, Promise<Emitted[]>>();
      const startCloses = (headers: BlockStamp[]) =>
        headers.forEach((h, k) => {
          const next = headers[k + 1];
          if (
            !next ||
            closes.has(h.number) ||
            Math.floor(h.timestamp / DAY) === Math.floor(next.timestamp / DAY)
          )
            return;
          const read = takeSnapshot(reader, this.contracts, h);
          read.catch(() => {});
          closes.set(h.number, read);
        });
      // The range's ends, its window and the last blocks of its UTC days need no logs: read while
      // the logs are, so the search's round trips are not added to theirs, and the day closes'
      // snapshots asked for before the next range's logs (if the range shrinks, its new end is
      // read after; if this read fails, rangeHeaders reads them again).
      const early = rangeHeaders(reader, from, want, windowFrom, []).then(
        (stamps) => {
          startCloses(stamps);
          return stamps.filter(isHeader);
        },
        () => [],
      );
      const { logs, to } = await reader.logs(from, want);
      reading.logsTo = to;
      reading.logCount = logs.length;
      if (this.newest === reading) this.pump();
      const headers = await rangeHeaders(reader, from, to, windowFrom, logs, await early);
      startCloses(headers);
      return { logs, to, headers, closes };
    })();
    // A failure is the next round's (it awaits this read), never an unhandled rejection.
    reading.read.catch(() => {});
    return reading;
  }
}
