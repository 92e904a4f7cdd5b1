/**
 * What an operator sees when they make a mistake: the real CLI in a child process, its
 * exact stderr (a code of its own and a hint, never INTERNAL) and exit status.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vs-cli-errors-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIG_HINT =
  'hint: choose the file with --config <file> or VAULTSTREAM_CONFIG=<file>; the default is config/default.yaml, relative to the working directory\n';

describe('vaultstream CLI: operator mistakes', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const r = await runCli(['--version']);
    expect(r.stdout).toBe(`${version}\n`);
    expect(r.code).toBe(0);
  });

  it('start --roles with a role that does not exist: an error listing the roles, nothing started', async () => {
    const r = await runCli(['start', '--roles', 'streams,apis'], {
      VAULTSTREAM_DATA_DIR: join(dir, 'roles'),
    });
    expect(r.stderr.split('\n')[0]).toBe(
      "error: option '--roles <list>' argument 'streams,apis' is invalid. roles are a comma-separated list of ingest, streams, api; got \"streams,apis\"",
    );
    expect(r.code).not.toBe(0);
  });

  it('a missing --config file: CONFIG_NOT_FOUND with the path tried and how to choose one', async () => {
    const file = join(dir, 'nope.yaml');
    const r = await runCli(['--config', file, 'status']);
    expect(r.stderr).toBe(
      `vaultstream: CONFIG_NOT_FOUND: cannot read config file ${file} (--config): no such file\n${CONFIG_HINT}`,
    );
    expect(r.code).toBe(2);
  });

  it('a missing VAULTSTREAM_CONFIG file names the variable', async () => {
    const file = join(dir, 'missing.yaml');
    const r = await runCli(['status'], { VAULTSTREAM_CONFIG: file });
    expect(r.stderr).toBe(
      `vaultstream: CONFIG_NOT_FOUND: cannot read config file ${file} (VAULTSTREAM_CONFIG): no such file\n${CONFIG_HINT}`,
    );
    expect(r.code).toBe(2);
  });

  it('an unknown key in the config file is an error naming it', async () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, `dataDir: ${join(dir, 'data')}\napi:\n  prot: 3001\n  cache:\n    ttl: 5\n`);
    const r = await runCli(['--config', file, 'status']);
    expect(r.stderr).toBe(
      'vaultstream: CONFIG_INVALID: invalid configuration:\n  api.prot: unknown key\n  api.cache.ttl: unknown key\n' +
        'hint: remove or correct the unknown keys (every setting is listed in docs/configuration.md)\n',
    );
    expect(r.code).toBe(2);
  });

  it('an unknown VAULTSTREAM__ environment path is an error naming the variable and the key', async () => {
    const r = await runCli(['status'], { VAULTSTREAM__api__prot: '3001' });
    expect(r.stderr).toBe(
      'vaultstream: CONFIG_INVALID: invalid environment:\n  VAULTSTREAM__api__prot: unknown setting api.prot\n' +
        'hint: VAULTSTREAM__<key>__<subkey> must name a setting of the config file (see docs/configuration.md)\n',
    );
    expect(r.code).toBe(2);
  });

  it('the API port in use: PORT_IN_USE naming the address and the settings', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runCli(['api'], {
        VAULTSTREAM_DATA_DIR: join(dir, 'port-data'),
        API_PORT: String(port),
        API_HOST: '127.0.0.1',
      });
      expect(r.stderr).toBe(
        `vaultstream: PORT_IN_USE: cannot listen on 127.0.0.1:${port}: the port is in use by another process\n` +
          'hint: stop the other process, or choose another port: api.port in the config file, or API_PORT=<port>\n',
      );
      expect(r.code).toBe(2);
    } finally {
      blocker.close();
    }
  });

  it("the SQL interface's port in use: PORT_IN_USE naming sql.http.port", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runCli(['api'], {
        VAULTSTREAM_DATA_DIR: join(dir, 'sql-port-data'),
        API_PORT: '0',
        VAULTSTREAM__sql__http__port: String(port),
      });
      expect(r.stderr).toBe(
        `vaultstream: PORT_IN_USE: cannot listen on 127.0.0.1:${port}: the port is in use by another process\n` +
          'hint: stop the other process, or choose another port: sql.http.port in the config file, or VAULTSTREAM__sql__http__port=<port>\n',
      );
      expect(r.code).toBe(2);
    } finally {
      blocker.close();
    }
  });

  it('a missing replay file: FILE_NOT_FOUND naming it', async () => {
    const r = await runCli(['replay', 'no-such-events.ndjson'], {
      VAULTSTREAM_DATA_DIR: join(dir, 'replay-data'),
    });
    expect(r.stderr).toBe(
      `vaultstream: FILE_NOT_FOUND: no such file: no-such-events.ndjson\nhint: check the path (a relative one is read from ${ROOT})\n`,
    );
    expect(r.code).toBe(2);
  });

  it('a ClickHouse server that is not there: STORE_UNAVAILABLE naming the URL and the setting', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    await new Promise<void>((r) => blocker.close(() => r())); // a port nobody listens on
    const r = await runCli(['migrate'], { CLICKHOUSE_URL: `http://127.0.0.1:${port}` });
    // The ClickHouse client logs its own report first; the CLI's verdict is the last two lines.
    expect(
      r.stderr.endsWith(
        `vaultstream: STORE_UNAVAILABLE: cannot reach the ClickHouse server at http://127.0.0.1:${port}: connection refused\n` +
          'hint: start it, or correct store.url / CLICKHOUSE_URL (empty: the embedded chDB under dataDir)\n',
      ),
      r.stderr,
    ).toBe(true);
    expect(r.code).toBe(2);
  });

  it('a SQL syntax error: SQL_SYNTAX with the position, not INTERNAL', async () => {
    const r = await runCli(['sql', 'SELEC 1'], { VAULTSTREAM_DATA_DIR: join(dir, 'sql-data') });
    const [first, hint, rest] = r.stderr.split('\n');
    // The engine's position and a few of the expected tokens, on one line.
    expect(first).toMatch(
      /^vaultstream: SQL_SYNTAX: syntax error in the SQL: failed at position 7 \(1\)[^\n]*\. Expected one of: (?:[^,]+, ){8}…$/,
    );
    expect(hint).toBe(
      'hint: check the SQL at that position; the tables, views and columns are listed in docs/views.md',
    );
    expect(rest).toBe('');
    expect(r.code).toBe(2);
  });

  it('a VaultstreamError keeps its own code and message (the data directory held by another process)', async () => {
    const data = join(dir, 'held');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'owner.pid'), String(process.pid));
    const r = await runCli(['migrate'], { VAULTSTREAM_DATA_DIR: data });
    expect(r.stderr).toBe(
      `vaultstream: STORE_UNAVAILABLE: data directory ${data} is in use by process ${process.pid}; stop it or use another dataDir\n`,
    );
    expect(r.code).toBe(2);
  });
});
