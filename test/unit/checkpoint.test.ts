/**
 * The ingesters' checkpoint file (ingest/checkpoint.ts): `saveAsync` writes the value as it was
 * when asked (not as the caller changes it after), lands its writes in the order they were asked
 * for, and leaves the file whole. There is no synchronous save: every writer (EVM, Solana, the
 * mint-flow tracker) writes off the main thread, which in the embedded deployment also answers
 * the API (docs/architecture.md#event-loop).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkpointFile } from '../../ingest/checkpoint.ts';

const root = mkdtempSync(join(tmpdir(), 'vs-checkpoint-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('checkpoint file', () => {
  it('saveAsync: the value as asked, writes in order, the last one kept', async () => {
    const file = checkpointFile<{ next: number; tip: number[] }>(root, 'evm-1');
    const state = { next: 0, tip: [] as number[] };
    const writes: Promise<void>[] = [];
    for (let k = 1; k <= 20; k++) {
      state.next = k;
      state.tip.push(k);
      writes.push(file.saveAsync(state));
    }
    // Changed after the last save was asked for: not what is saved.
    state.next = 99;
    await Promise.all(writes);
    expect(file.load()).toEqual({ next: 20, tip: Array.from({ length: 20 }, (_, k) => k + 1) });
    expect(JSON.parse(readFileSync(file.path, 'utf8')).next).toBe(20);
    // No temporary file left beside it.
    expect(readdirSync(join(root, 'ingest'))).toEqual(['evm-1.json']);
  });

  it('saveAsync: a failed write rejects its caller and the next write still lands', async () => {
    const dir = join(root, 'blocked');
    const file = checkpointFile<{ next: number }>(dir, 'evm-2');
    // The ingest directory cannot be made: a file in its place.
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'ingest'), 'x');
    await expect(file.saveAsync({ next: 1 })).rejects.toThrow();
    rmSync(join(dir, 'ingest'));
    await file.saveAsync({ next: 2 });
    expect(file.load()).toEqual({ next: 2 });
  });

  it('offers no synchronous save (its fsyncs would hold the event loop)', () => {
    const file = checkpointFile<{ next: number }>(root, 'evm-3');
    expect(Object.keys(file).sort()).toEqual(['load', 'path', 'saveAfter', 'saveAsync']);
  });

  it('saveAfter: written at once, the checkpoint replaced only once `after` resolves; kept when it rejects', async () => {
    const file = checkpointFile<{ next: number }>(root, 'evm-4');
    await file.saveAsync({ next: 1 });
    let done = () => {};
    const publish = new Promise<void>((r) => {
      done = r;
    });
    const saved = file.saveAfter({ next: 2 }, publish);
    // The temporary file is written while `after` is pending; the checkpoint still says 1.
    const tmp = `${file.path}.tmp`;
    for (let k = 0; k < 200; k++) {
      try {
        if (JSON.parse(readFileSync(tmp, 'utf8')).next === 2) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(JSON.parse(readFileSync(tmp, 'utf8'))).toEqual({ next: 2 });
    expect(file.load()).toEqual({ next: 1 });
    done();
    await saved;
    expect(file.load()).toEqual({ next: 2 });
    // A failed `after`: this save rejects with its reason, the checkpoint stays, the next save lands.
    await expect(file.saveAfter({ next: 3 }, Promise.reject(new Error('publish failed')))).rejects.toThrow(
      'publish failed',
    );
    expect(file.load()).toEqual({ next: 2 });
    await file.saveAsync({ next: 4 });
    expect(file.load()).toEqual({ next: 4 });
  });
});
