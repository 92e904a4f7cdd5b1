/**
 * `npm start` as a fresh clone runs it, for the benchmarks of readiness and disk use
 * (bench/startup.ts, bench/devnet-disk.ts): `vaultstream start` (compiled, the default config:
 * the devnet on) on an empty data directory, timed from spawn to the first `/readyz` 200.
 * The process gets a temp dir of its own (TMPDIR), so the anvil homes it makes
 * (`vs-anvil-*`, devnet/anvil.ts) are its alone and can be measured.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

export interface ReadyService {
  child: ChildProcess;
  api: string;
  /** Spawn to the first `/readyz` 200. */
  readyMs: number;
  /** The data directory and the process's own temp dir (anvil homes). */
  dataDir: string;
  tmp: string;
  /** Bytes on disk under the data directory and under the anvil homes. */
  diskBytes(): { dataDir: number; bus: number; anvilHomes: number };
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s); removes the directories. */
  stop(): Promise<void>;
}

/**
 * Bytes the files under `dir` take on disk (`du`), 0 when it is gone. `du` exits 1 when a file
 * goes away while it counts (the store merges and drops parts all the time): its total stands.
 */
export function duBytes(dir: string): number {
  const r = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
  const kib = Number(r.stdout.trim().split('\n').pop()?.split('\t')[0]);
  return Number.isFinite(kib) ? kib * 1024 : 0;
}

/**
 * Starts `vaultstream start` with `env` over the default config and resolves once `/readyz`
 * answers 200; `root` is the checkout run (default this one; e.g. an older commit's, to compare).
 */
export async function startUntilReady(
  env: Record<string, string> = {},
  timeoutMs = 300_000,
  root = ROOT,
): Promise<ReadyService> {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-stale'], {
    stdio: ['ignore', 2, 2],
  });
  const base = mkdtempSync(join(tmpdir(), 'vaultstream-ready-'));
  const dataDir = join(base, 'data');
  const tmp = join(base, 'tmp');
  mkdirSync(tmp);
  const started = performance.now();
  // What `npm start` runs once dist/ is built (package.json's start script).
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=16', join(root, 'bin', 'vaultstream.mjs'), 'start'],
    {
      cwd: root,
      env: {
        ...process.env,
        VAULTSTREAM_RUNTIME: 'compiled',
        VAULTSTREAM_DATA_DIR: dataDir,
        API_PORT: '0',
        VAULTSTREAM__sql__http__port: '0',
        LOG_LEVEL: 'warn',
        TMPDIR: tmp,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(late);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`vaultstream start exited ${child.exitCode}: ${stderr}`);
      if (performance.now() - started > timeoutMs)
        throw new Error(`not ready after ${timeoutMs} ms: ${stderr}`);
      const api = /vaultstream API (\S+)\/v1/.exec(stdout)?.[1];
      const status = api
        ? await fetch(`${api}/readyz`).then(
            (r) => r.status,
            () => 0,
          )
        : 0;
      if (api && status === 200) {
        const readyMs = performance.now() - started;
        const anvilHomes = () => readdirSync(tmp).filter((n) => n.startsWith('vs-anvil-'));
        return {
          child,
          api,
          readyMs,
          dataDir,
          tmp,
          diskBytes: () => ({
            dataDir: duBytes(dataDir),
            bus: duBytes(join(dataDir, 'bus')),
            anvilHomes: anvilHomes().reduce((s, h) => s + duBytes(join(tmp, h)), 0),
          }),
          stop,
        };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}
