/**
 * The follower's read pipeline: the logs of one block range, then the headers it needs
 * (`range-headers.ts`), and while backfilling the next range read while the current one is
 * processed.
 */
import type { BlockStamp, ChainReader } from './chain.ts';
import type { RawLog } from './decode.ts';
import { rangeHeaders } from './range-headers.ts';

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
}

export class RangeReader {
  /** The range after the last one taken, being read while that one is processed. */
  private ahead: { from: number; read: Promise<RangeRead> } | undefined;

  /** `window`: the reorg window, whose every block below the head is read. */
  constructor(
    private readonly reader: ChainReader,
    private readonly window: number,
  ) {}

  /** The range read ahead when it starts at `from`, else a fresh read up to `head` at most. */
  take(from: number, head: number): Promise<RangeRead> {
    const ahead = this.ahead;
    this.ahead = undefined;
    return ahead && ahead.from === from ? ahead.read : this.read(from, head);
  }

  /** Starts reading the range from `from`, for the next `take`. */
  readAhead(from: number, head: number): void {
    const read = this.read(from, head);
    // A failure is the next round's (it awaits this read), never an unhandled rejection.
    read.catch(() => {});
    this.ahead = { from, read };
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

  /**
   * Logs of the next range from `from` (at most the sizer's range, up to `head`), then the
   * headers it needs: the first and last block, the blocks holding logs, the reorg window
   * below `head` and the last block of each UTC day ending in it.
   */
  private async read(from: number, head: number): Promise<RangeRead> {
    const { reader } = this;
    const want = Math.min(head, from + reader.sizer.size - 1);
    const { logs, to } = await reader.logs(from, want);
    const headers = await rangeHeaders(reader, from, to, head - this.window + 1, logs);
    return { logs, to, headers };
  }
}
