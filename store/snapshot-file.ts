import { type FileHandle, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { VaultstreamError } from '../core/errors.ts';
import { processFilesDir } from '../core/lock.ts';

/** Bytes per read handed to a reader (the largest piece of the file a reader holds): 256 KiB. */
const READ_BYTES = 1 << 18;

/** `<dataDir>/snapshots`, created, with the files of dead processes removed. */
export function snapshotDir(dataDir: string): string {
  return processFilesDir(dataDir, 'snapshots');
}

export class SnapshotFile {
  /** Bytes written so far (readers read up to here). */
  size = 0;
  private complete = false;
  private failure: unknown;
  private removed = false;
  private wake: () => void = () => undefined;
  private changed: Promise<void> = this.nextChange();

  private constructor(
    readonly path: string,
    private writer: FileHandle | undefined,
  ) {}

  /** A new, empty file named `<pid>-<name>` in `dir`. */
  static async create(dir: string, name: string): Promise<SnapshotFile> {
    const path = join(dir, `${process.pid}-${name}`);
    return new SnapshotFile(path, await open(path, 'wx'));
  }

  private nextChange(): Promise<void> {
    return new Promise((r) => {
      this.wake = r;
    });
  }

  private notify(): void {
    const wake = this.wake;
    this.changed = this.nextChange();
    wake();
  }

  /** Appends `bytes` (one append at a time: await each). */
  async append(bytes: Buffer): Promise<void> {
    if (!this.writer) throw new VaultstreamError('INTERNAL', `snapshot file ${this.path} is closed`);
    let off = 0;
    while (off < bytes.length) {
      const { bytesWritten } = await this.writer.write(bytes, off, bytes.length - off, this.size + off);
      off += bytesWritten;
    }
    this.size += bytes.length;
    this.notify();
  }

  /** The file is whole: readers end at its last byte. */
  async finish(): Promise<void> {
    await this.closeWriter();
    this.complete = true;
    this.notify();
  }

  /** The file will not be completed: readers that have not reached its end fail with `err`. */
  async fail(err: unknown): Promise<void> {
    this.failure = err;
    this.notify();
    await this.closeWriter().catch(() => undefined);
  }

  private async closeWriter(): Promise<void> {
    const w = this.writer;
    this.writer = undefined;
    await w?.close();
  }

  /** The bytes from the start, as they are written, to the end (throws if the writer fails). */
  async *read(): AsyncGenerator<Buffer> {
    const fh = await open(this.path, 'r');
    try {
      let pos = 0;
      for (;;) {
        if (pos < this.size) {
          const buf = Buffer.allocUnsafe(Math.min(READ_BYTES, this.size - pos));
          const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
          if (bytesRead === 0) throw new VaultstreamError('INTERNAL', `snapshot file ${this.path} shrank`);
          pos += bytesRead;
          yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
        } else if (this.complete) {
          return;
        } else if (this.failure !== undefined) {
          throw new VaultstreamError('STORE_QUERY_FAILED', 'the snapshot being read failed to build', {
            cause: this.failure,
          });
        } else {
          await this.changed;
        }
      }
    } finally {
      await fh.close();
    }
  }

  /** Deletes the file (idempotent; readers still open keep reading what they opened). */
  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await this.closeWriter().catch(() => undefined);
    await unlink(this.path).catch(() => undefined);
  }
}
