/**
 * Durable checkpoints of the ingesters: one small JSON file per stream under
 * `<dataDir>/ingest/`, replaced atomically (write a temp file, fsync, rename, fsync
 * the directory) so a crash leaves either the old or the new checkpoint, never half.
 * The writes are off the main thread (`saveAsync`: its fsyncs block no other work, e.g. the
 * consumers, the API or the next range's read; in the embedded deployment they share one event
 * loop, docs/architecture.md#event-loop); they land in the order they were asked for. There is
 * no synchronous save: a sync fsync held every request the API was answering meanwhile.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { VaultstreamError } from '../core/errors.ts';

export interface CheckpointFile<T> {
  /** The stored value, or undefined before the first save. */
  load(): T | undefined;
  /**
   * `value` as it is now (serialised at once: later changes to it are not saved), durable once
   * the promise resolves; written after every earlier `saveAsync` of this file.
   */
  saveAsync(value: T): Promise<void>;
  /**
   * `saveAsync` whose temporary file is written and fsync'd at once, but renamed over the
   * checkpoint only once `after` resolves (what the value says is done, e.g. a publish, being
   * durable): the write's fsync overlaps it, and the checkpoint never says more than is done. If
   * `after` rejects, the checkpoint stays as it was and this rejects with the same reason.
   */
  saveAfter(value: T, after: Promise<unknown>): Promise<void>;
  readonly path: string;
}

/** The checkpoint `<dataDir>/ingest/<name>.json`. */
export function checkpointFile<T>(dataDir: string, name: string): CheckpointFile<T> {
  const dir = join(dataDir, 'ingest');
  const path = join(dir, `${name}.json`);
  /** The last `saveAsync` queued (its failure is its caller's, not the next write's). */
  let queue: Promise<unknown> = Promise.resolve();
  return {
    path,
    load() {
      let text: string;
      try {
        text = readFileSync(path, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw e;
      }
      try {
        return JSON.parse(text) as T;
      } catch (e) {
        throw new VaultstreamError(
          'DECODE_FAILED',
          `checkpoint ${path} is not JSON; delete it to start over`,
          {
            cause: e,
          },
        );
      }
    },
    saveAsync: (value) => save(value, Promise.resolve()),
    saveAfter: (value, after) => save(value, after),
  };
  function save(value: T, after: Promise<unknown>): Promise<void> {
    const text = JSON.stringify(value);
    // Not an unhandled rejection while the write goes on: its failure is this save's.
    after.catch(() => {});
    const written = queue.then(async () => {
      await mkdir(dir, { recursive: true });
      const tmp = `${path}.tmp`;
      const fh = await open(tmp, 'w');
      try {
        await fh.writeFile(text);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await after;
      await rename(tmp, path);
      const dh = await open(dir, 'r');
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    });
    queue = written.catch(() => {});
    return written;
  }
}
