/**
 * The follower's read pipeline: the logs of one block range and the headers it needs
 * (`range-headers.ts`: those that need no logs are read alongside them, the day-end search
 * among them), then the snapshots of the UTC days that close inside it; while
 * backfilling, the next range's logs are asked for as soon as the current range's are in, and
 * read (its day closes too) while the current one is processed.
 */
import { type BlockStamp, type ChainReader, isHeader } from './chain.ts';
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
   * first block is not among them: the previous range's last block closes it).
   */
  closes: Map<number, Promise<Emitted[]>>;
}

/** A range being read: `logsTo` once its logs are in, `taken` once the follower asked for it. */
interface Reading {
  from: number;
  head: number;
  read: Promise<RangeRead>;
  logsTo?: number;
  taken: boolean;
}

export class RangeReader {
  /** The range after the last one taken, being read while that one is read and processed. */
  private ahead: Reading | undefined;

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
   * the taken range's logs are in, the next range's read starts (while the taken range's headers
   * are read and it is processed): the logs of a backfill come one after the other, as a bare
   * client would read them.
   */
  take(from: number, head: number): Promise<RangeRead> {
    const ahead = this.ahead;
    this.ahead = undefined;
    const taken = ahead && ahead.from === from ? ahead : this.start(from, head);
    taken.taken = true;
    this.next(taken);
    return taken.read;
  }

  /** Starts reading the range from `from`, for the next `take` (unless it is being read already). */
  readAhead(from: number, head: number): void {
    if (this.ahead?.from !== from) this.ahead = this.start(from, head);
  }

  /** Forgets a range read ahead (a reorg moved the next block back). */
  drop(): void {
    this.ahead = undefined;
  }

  /** Waits for a range still being read ahead (its failure ignored) and forgets it. */
  async settle(): Promise<void> {
    const ahead = this.ahead;
    this.ahead = undefined;
    await ahead?.read.catch(() => {});
  }

  /** The read of the range after `taken`, once its logs are in and it ends below its head. */
  private next(taken: Reading): void {
    if (taken.logsTo !== undefined && taken.logsTo < taken.head && !this.ahead)
      this.ahead = this.start(taken.logsTo + 1, taken.head);
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
    reading.read = (async () => {
      const want = Math.min(head, from + reader.sizer.size - 1);
      const windowFrom = head - this.window + 1;
      // The range's ends, its window and the last blocks of its UTC days need no logs: read while
      // the logs are, so the search's round trips are not added to theirs (if the range shrinks,
      // its new end is read after; if this read fails, rangeHeaders reads them again).
      const early = rangeHeaders(reader, from, want, windowFrom, []).then(
        (stamps) => stamps.filter(isHeader),
        () => [],
      );
      const { logs, to } = await reader.logs(from, want);
      reading.logsTo = to;
      if (reading.taken) this.next(reading);
      const headers = await rangeHeaders(reader, from, to, windowFrom, logs, await early);
      const closes = new Map<number, Promise<Emitted[]>>();
      headers.forEach((h, k) => {
        const next = headers[k + 1];
        if (!next || Math.floor(h.timestamp / DAY) === Math.floor(next.timestamp / DAY)) return;
        const read = takeSnapshot(reader, this.contracts, h);
        read.catch(() => {});
        closes.set(h.number, read);
      });
      return { logs, to, headers, closes };
    })();
    // A failure is the next round's (it awaits this read), never an unhandled rejection.
    reading.read.catch(() => {});
    return reading;
  }
}
