/**
 * The data team while the service runs: `vaultstream start` serves the ClickHouse-compatible SQL
 * interface; curl, `@clickhouse/client` and `vaultstream sql` from another shell all answer from
 * the live store (the CLI goes through the interface because the service holds the data
 * directory), and a write from the CLI is refused with a message that says why.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@clickhouse/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ROOT, runCli } from '../support/cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-sql-live-'));
const env = { VAULTSTREAM_DATA_DIR: join(dir, 'data'), VAULTSTREAM__devnet__enabled: 'false' };
let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('SQL while `vaultstream start` runs', () => {
  it('curl, @clickhouse/client and vaultstream sql answer from the live store', async () => {
    child = spawn(process.execPath, [join(ROOT, 'bin', 'vaultstream.mjs'), 'start'], {
      cwd: ROOT,
      env: { ...process.env, ...env, API_PORT: '0', VAULTSTREAM__sql__http__port: '0', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    const url = await vi.waitFor(
      () => {
        const m = /vaultstream SQL (http:\/\/\S+) \(ClickHouse HTTP interface, read-only\)/.exec(out);
        if (!m) throw new Error(`no SQL interface line yet: ${out}`);
        return m[1];
      },
      { timeout: 60_000, interval: 200 },
    );
    const curl = await promisify(execFile)('curl', ['-sS', `${url}/?query=SELECT+1`]);
    expect(curl.stdout).toBe('1\n');
    // The registry lands through the bus; the analyst sees it as soon as it is stored.
    const client = createClient({ url, database: 'vaultstream' });
    try {
      const n = await vi.waitFor(
        async () => {
          const rs = await client.query({
            query: 'SELECT count() AS n FROM registry_raw',
            format: 'JSONEachRow',
          });
          const [row] = (await rs.json()) as { n: string }[];
          if (row.n !== '3') throw new Error(`registry rows: ${row.n}`);
          return row.n;
        },
        { timeout: 60_000, interval: 300 },
      );
      expect(n).toBe('3');
    } finally {
      await client.close();
    }
    // docs/sql.md's @clickhouse/client example, as a reader would paste it (with this run's address).
    const readme = readFileSync(join(ROOT, 'docs/sql.md'), 'utf8');
    const example = /```js\n(\/\/ node --input-type=module[^`]*?)```/.exec(readme)?.[1];
    expect(example).toBeDefined();
    const script = example!.replaceAll('http://127.0.0.1:8123', url);
    const ran = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
    });
    expect(ran.stdout).toContain('(index)');
    const cli = await runCli(
      ['sql', 'SELECT count() AS n FROM vaultstream.registry_raw', '--format', 'csv'],
      env,
    );
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toBe('n\n3\n');
    const write = await runCli(['sql', 'DROP TABLE vaultstream.registry_raw'], env);
    expect(write.code).toBe(2);
    expect(write.stderr).toContain(
      'vaultstream: READ_ONLY: only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN are allowed here (read-only); this is a DROP statement. `vaultstream sql` is read-only unless --write is given',
    );
    const forced = await runCli(['sql', '--write', 'DROP TABLE vaultstream.registry_raw'], env);
    expect(forced.code).toBe(2);
    expect(forced.stderr).toMatch(/READ_ONLY: --write needs the data directory, which process \d+ holds/);
    const still = await runCli(
      ['sql', 'SELECT count() AS n FROM vaultstream.registry_raw', '--format', 'csv'],
      env,
    );
    expect(still.stdout).toBe('n\n3\n');
  });
});
