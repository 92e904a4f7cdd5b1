/**
 * Durable checkpoints of the ingesters: one small JSON file per stream under
 * `<dataDir>/ingest/`, replaced atomically (write a temp file, fsync, rename, fsync
 * the directory) so a crash leaves either the old or the new checkpoint, never half.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { VaultstreamError } from '../core/errors.ts';

export interface CheckpointFile<T> {
  /** The stored value, or undefined before the first save. */
  load(): T | undefined;
  /** Durable once it returns. */
  save(value: T): void;
  readonly path: string;
}

/** The checkpoint `<dataDir>/ingest/<name>.json`. */
export function checkpointFile<T>(dataDir: string, name: string): CheckpointFile<T> {
  const dir = join(dataDir, 'ingest');
  const path = join(dir, `${name}.json`);
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
    save(value) {
      mkdirSync(dir, { recursive: true });
      const tmp = `${path}.tmp`;
      const fd = openSync(tmp, 'w');
      try {
        writeSync(fd, JSON.stringify(value));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, path);
      const dfd = openSync(dir, 'r');
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    },
  };
}
