/**
 * The follower's read pipeline: the logs of one block range and the headers it needs
 * (`range-headers.ts`: those that need no logs are read alongside them, the day-end search
 * among them), then the snapshots of the UTC days that close inside it; while
 * backfilling, the next range's logs are asked for as soon as the current range's are in, and
 * read (its day closes too) while the current one is processed.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type BlockHeader, type BlockStamp, type ChainReader, isHeader, TARGET_LOGS } from './chain.ts';
import type { ChainContracts } from './contracts.ts';
import type { RawLog } from './decode.ts';
import type { Emitted } from './map-context.ts';
import { rangeHeaders } from './range-headers.ts';
import { takeSnapshots } from './snapshots.ts';

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
   * `headers`, by block (a failure is the follower's to report), and for the previous range's
   * last block if it closes a day and the backfill's day-end search has read it already. Started
   * from the headers read alongside the logs: a range the provider shrank may hold unused reads
   * past it.
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
 * chain, whose ranges the sizer fills to it: there a second one ahead costs CPU and wall time,
 * and holds more memory, for no earlier answer).
 */
const DEPTH = 2;

export class RangeReader {
  /** The ranges after the last one taken, oldest first, being read while it is processed. */
  private readonly ahead: Reading[] = [];
  /** The newest range being read (taken or ahead): the next starts after its end. */
  private newest: Reading | undefined;

  /** The chain's reorg window (`contracts.chain.reorgWindow`): every block of it below the head is read. */
  private readonly window: number;

  /**
   * The backfill's day-end search (`searchDays`): the span it covers and the headers it reads
   * (none if it failed), and the snapshot reads it started at the day closes among them.
   */
  private daySearch: { from: number; to: number; headers: Promise<BlockHeader[]> } | undefined;
  private readonly dayCloses = new Map<number, Promise<Emitted[]>>();

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
    for (const n of this.dayCloses.keys()) if (n < from - 1) this.dayCloses.delete(n);
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

  /** Forgets the ranges read ahead and what the day-end search found (a reorg moved the next block back, or the chain moved during a read). */
  drop(): void {
    this.ahead.length = 0;
    this.newest = undefined;
    this.daySearch = undefined;
    this.dayCloses.clear();
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
    this.searchDays(from, head);
    reading.read = (async () => {
      const want = Math.min(head, from + reader.sizer.size - 1);
      const windowFrom = head - this.window + 1;
      const closes = new Map<number, Promise<Emitted[]>>();
      const startCloses = (headers: BlockStamp[]) => this.startCloses(headers, closes);
      // The range's ends, its window and the last blocks of its UTC days need no logs: read while
      // the logs are, so the search's round trips are not added to theirs, and the day closes'
      // snapshots asked for before the next range's logs (if the range shrinks, its new end is
      // read after; if this read fails, rangeHeaders reads them again). Days the backfill's
      // search covers are not searched again.
      const search = this.daySearch;
      const dayEnds = search && from >= search.from && from <= search.to ? search.headers : undefined;
      const early = rangeHeaders(reader, from, want, windowFrom, [], [], dayEnds).then(
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
      const headers = await rangeHeaders(reader, from, to, windowFrom, logs, await early, dayEnds);
      startCloses(headers);
      // The day ending at the previous range's last block, if the backfill's search has read it.
      const before = this.dayCloses.get(from - 1);
      if (before) closes.set(from - 1, before);
      // One turn of the event loop before the follower gets the range: the requests started above
      // (the next range's logs, this range's snapshots) are written on a later tick, and the
      // follower's processing of a full range holds the thread for tens of ms once this resolves.
      // Without the turn the next range's eth_getLogs would leave after that processing, not
      // alongside it.
      await nextTurn();
      return { logs, to, headers, closes };
    })();
    // A failure is the next round's (it awaits this read), never an unhandled rejection.
    reading.read.catch(() => {});
    return reading;
  }

  /**
   * Starts the snapshot read of each day close among `headers` (sorted; the last block of a UTC
   * day, followed by the next day's first) not in `into` yet, all in one round trip (chain.ts
   * `readAt`), or takes the backfill search's read of it.
   */
  private startCloses(headers: BlockStamp[], into: Map<number, Promise<Emitted[]>>): void {
    const fresh: BlockStamp[] = [];
    headers.forEach((h, k) => {
      const next = headers[k + 1];
      if (!next || into.has(h.number) || Math.floor(h.timestamp / DAY) === Math.floor(next.timestamp / DAY))
        return;
      const known = this.dayCloses.get(h.number);
      if (known) into.set(h.number, known);
      else fresh.push(h);
    });
    takeSnapshots(this.reader, this.contracts, fresh).forEach((read, k) => {
      read.catch(() => {});
      into.set(fresh[k].number, read);
    });
  }

  /**
   * Once a backfill starts (the head is more than two ranges away, past what an earlier search
   * covered): the last block of every UTC day below the reorg window, found by one search over
   * the whole span (range-headers.ts), and their snapshots, read while the logs are. Otherwise
   * each range would search its own days once its ends were read, then read their snapshots:
   * round trips after the last range's logs, which a distant provider makes a large share of a
   * short backfill (bench/sparse-backfill.ts, `--provider-latency-ms`). A failed search leaves
   * each range to search its own.
   */
  private searchDays(from: number, head: number): void {
    const to = head - this.window;
    if ((this.daySearch && from <= this.daySearch.to) || to - from < 2 * this.reader.sizer.size) return;
    const search = {
      from,
      to,
      headers: rangeHeaders(this.reader, from, to, to + 1, []).then(
        (stamps) => {
          const headers = stamps.filter(isHeader);
          // Unless dropped meanwhile.
          if (this.daySearch === search) this.startCloses(headers, this.dayCloses);
          return headers;
        },
        () => [],
      ),
    };
    this.daySearch = search;
  }
}
