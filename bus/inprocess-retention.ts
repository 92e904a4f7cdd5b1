/**
 * Retention of the in-process bus's partition logs (bus/inprocess.ts): the bytes every consumer
 * group has committed past are freed, so a long-running `vaultstream start` does not fill the
 * disk (the devnet's live ticks append about 200 MB a day). Nothing a group has not committed
 * is ever freed.
 *
 * An offset is a record's byte position in its log, and other processes may be appending to the
 * log at the same moment, so the log is never rewritten or truncated: the committed prefix is
 * turned into a hole (`fallocate --punch-hole`: the file keeps its size and every offset, its
 * blocks go back to the file system). Node has no fallocate of its own; the `fallocate` program
 * is util-linux's, present on Linux (the image is Debian). Where it is missing or the file
 * system cannot punch holes, retention logs one warning and stops; the logs keep everything.
 *
 * The round, for each `topic/partition` some group has committed: the smallest committed offset
 * over the groups that have it (`<dir>/_groups/*.json`) becomes the log's start, written first
 * (`<dir>/_start.json`, atomically, never lowered), then the bytes before it, rounded down to
 * `PUNCH_ALIGN`, are punched. A group that never committed a partition starts at its log's start
 * (Kafka's `earliest` after retention); a group whose committed offset is before the start (its
 * offsets file was restored from an old copy) is refused at subscribe.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../core/log.ts';
import { ioError, isMissing, readOffsetsFile, writeOffsetsFile } from './inprocess-files.ts';

const execFileAsync = promisify(execFile);

/** Holes are punched in whole MiBs: a round does nothing for a partition with less to free. */
export const PUNCH_ALIGN = 1 << 20;

/** The file of the logs' start offsets (`topic/partition` -> decimal offset). */
export const startFile = (dir: string) => join(dir, '_start.json');

/** The logs' start offsets; {} while nothing was freed. */
export function readStart(dir: string): Promise<Record<string, string>> {
  return readOffsetsFile(startFile(dir), '_start');
}

/**
 * The smallest committed offset of each `topic/partition` over every group's offsets file, or
 * undefined when a file cannot be read (a round never frees on a partial view).
 */
async function slowestCommitted(dir: string, log: Logger): Promise<Map<string, bigint> | undefined> {
  const groups = join(dir, '_groups');
  let names: string[];
  try {
    names = (await readdir(groups)).filter((n) => n.endsWith('.json'));
  } catch (err) {
    if (isMissing(err)) return new Map();
    throw ioError('list consumer groups in', groups, err);
  }
  const min = new Map<string, bigint>();
  for (const name of names) {
    let committed: Record<string, string>;
    try {
      committed = await readOffsetsFile(join(groups, name), decodeURIComponent(name.slice(0, -5)));
    } catch (err) {
      log.warn({ err }, 'bus retention: a group offsets file is unreadable; nothing freed this round');
      return undefined;
    }
    for (const [k, v] of Object.entries(committed)) {
      const at = BigInt(v);
      const m = min.get(k);
      if (m === undefined || at < m) min.set(k, at);
    }
  }
  return min;
}

export interface RetentionHost {
  readonly dir: string;
  logPath(topic: string, partition: number): string;
}

/** Frees the committed prefix of every partition log; one round at a time per bus. */
export class Retention {
  /** Bytes already punched per partition (from `_start.json` at the first round). */
  private punched: Map<string, bigint> | undefined;
  private disabled = false;
  private running: Promise<number> | undefined;

  constructor(
    private readonly bus: RetentionHost,
    private readonly log: Logger,
  ) {}

  /** One round: the bytes newly freed (0 when disabled or when nothing reached `PUNCH_ALIGN`). */
  round(): Promise<number> {
    this.running ??= this.freeCommitted().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Resolves once no round is running. */
  async idle(): Promise<void> {
    await this.running?.catch(() => 0);
  }

  private async freeCommitted(): Promise<number> {
    if (this.disabled) return 0;
    const slowest = await slowestCommitted(this.bus.dir, this.log);
    if (!slowest || slowest.size === 0) return 0;
    const start = await readStart(this.bus.dir);
    this.punched ??= new Map(
      Object.entries(start).map(([k, v]) => [k, (BigInt(v) / BigInt(PUNCH_ALIGN)) * BigInt(PUNCH_ALIGN)]),
    );
    const align = BigInt(PUNCH_ALIGN);
    const todo: [string, bigint][] = [];
    let moved = false;
    for (const [k, at] of slowest) {
      if (at > BigInt(start[k] ?? '0')) {
        start[k] = String(at);
        moved = true;
      }
      const hole = (BigInt(start[k] ?? '0') / align) * align;
      if (hole > (this.punched.get(k) ?? 0n)) todo.push([k, hole]);
    }
    if (!moved && todo.length === 0) return 0;
    // The start first: a group subscribing from now on never reads a hole.
    await writeOffsetsFile(startFile(this.bus.dir), start);
    let freed = 0;
    for (const [k, hole] of todo) {
      const cut = k.lastIndexOf('/');
      const path = this.bus.logPath(k.slice(0, cut), Number(k.slice(cut + 1)));
      try {
        await execFileAsync('fallocate', ['--punch-hole', '--offset', '0', '--length', String(hole), path]);
      } catch (err) {
        this.disabled = true;
        this.log.warn(
          { err, path },
          'bus retention: cannot punch a hole in the bus log (fallocate missing, or the file system cannot); the logs keep everything',
        );
        return freed;
      }
      freed += Number(hole - (this.punched.get(k) ?? 0n));
      this.punched.set(k, hole);
    }
    return freed;
  }
}
