/**
 * The file side of the in-process bus (bus/inprocess.ts states the durability rules):
 * appending records to partition logs (one queue per partition, O_APPEND, fsync before the
 * publish resolves, a failed file reopened for the next append) and the group's committed
 * offsets file (read and validated; replaced atomically: temporary file, fsync, rename,
 * directory fsync).
 */
import { closeSync, fsync, mkdirSync, openSync, write } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { VaultstreamError } from '../core/errors.ts';

const writeAsync = promisify(write);
export const fsyncAsync = promisify(fsync);

export function ioError(what: string, path: string, err: unknown): VaultstreamError {
  return new VaultstreamError('BUS_UNAVAILABLE', `cannot ${what} ${path}: ${(err as Error).message}`, {
    cause: err,
    details: { path },
  });
}

export const isMissing = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

/** Writes all of `data` at the end of the file (opened with O_APPEND), then makes it durable. */
async function appendDurably(fd: number, data: Buffer): Promise<void> {
  let off = 0;
  while (off < data.length) off += (await writeAsync(fd, data, off, data.length - off)).bytesWritten;
  await fsyncAsync(fd);
}

/** Appends to partition logs, each partition's appends queued in order. */
export class PartitionAppender {
  private readonly fds = new Map<string, number>();
  /** The last append queued on each partition log (`topic/partition`). */
  private readonly appends = new Map<string, Promise<unknown>>();

  constructor(private readonly pathOf: (topic: string, partition: number) => string) {}

  /**
   * Appends to a partition's log after the appends before it: one publish's records stay whole
   * and in order even if the system splits a write, and `close` waits for every one.
   */
  append(topic: string, partition: number, data: Buffer): Promise<void> {
    const k = `${topic}/${partition}`;
    const done = (this.appends.get(k) ?? Promise.resolve()).then(async () => {
      const fd = this.fd(topic, partition);
      try {
        await appendDurably(fd, data);
      } catch (err) {
        // The file's state after a failed write or fsync is unknown: the next append reopens it
        // (a partial record left behind is a torn record, which readers skip; see bus/inprocess.ts).
        this.fds.delete(k);
        try {
          closeSync(fd);
        } catch {}
        throw ioError('append to bus log', this.pathOf(topic, partition), err);
      }
    });
    this.appends.set(
      k,
      done.catch(() => undefined),
    );
    return done;
  }

  private fd(topic: string, partition: number): number {
    const k = `${topic}/${partition}`;
    let fd = this.fds.get(k);
    if (fd === undefined) {
      const path = this.pathOf(topic, partition);
      try {
        mkdirSync(dirname(path), { recursive: true });
        fd = openSync(path, 'a');
      } catch (err) {
        throw ioError('open bus log', path, err);
      }
      this.fds.set(k, fd);
    }
    return fd;
  }

  /** Waits for every queued append, then closes the files. */
  async close(): Promise<void> {
    await Promise.all(this.appends.values());
    this.appends.clear();
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

/** A group's committed offsets (`topic/partition` -> decimal offset) from `file`; {} when it does not exist. */
export async function readOffsetsFile(file: string, groupId: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (isMissing(err)) return {};
    throw ioError('read committed offsets', file, err);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new VaultstreamError('DECODE_FAILED', `committed offsets file ${file} is not valid JSON`, {
      cause: err,
      details: { file, groupId },
      hint: 'restore it, or delete it to consume the group from the start again',
    });
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    !Object.values(parsed).every((v) => typeof v === 'string' && /^\d+$/.test(v))
  )
    throw new VaultstreamError('DECODE_FAILED', `committed offsets file ${file} is not a map of offsets`, {
      details: { file, groupId },
      hint: 'restore it, or delete it to consume the group from the start again',
    });
  return parsed as Record<string, string>;
}

/** Replaces `file` with `offsets` atomically: temporary file, fsync, rename, directory fsync. */
export async function writeOffsetsFile(file: string, offsets: Record<string, string>): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w');
  try {
    await fh.writeFile(JSON.stringify(offsets));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
