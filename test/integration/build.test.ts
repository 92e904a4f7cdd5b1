/**
 * The compiled CLI (scripts/build.mjs -> dist/): it builds, bin/vaultstream.mjs runs it
 * (VAULTSTREAM_RUNTIME=compiled: no tsx fallback), `--version`, `--help` and `sql` work from it,
 * and `--help` / `--version` load none of the heavy packages (they load in the commands that need them).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.ts';

const run = promisify(execFile);
const compiled = { VAULTSTREAM_RUNTIME: 'compiled' };
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

/** Packages that only the commands running an engine, a chain client, a bus or a pretty logger load. */
const HEAVY = [
  'chdb',
  'kafkajs',
  'viem',
  '@solana/',
  'litesvm',
  'solc',
  'pino',
  'pino-pretty',
  'koa',
  '@clickhouse/client',
  'avsc',
  'tsx',
  'esbuild',
];

let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'vaultstream-build-'));
  // Built here whatever dist/ holds, so the test checks the current sources.
  await run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT });
}, 120_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('compiled CLI', () => {
  it('the build step writes dist/ with the entry and the list of its sources', () => {
    const info = JSON.parse(readFileSync(join(ROOT, 'dist', 'build-info.json'), 'utf8')) as {
      startedAt: number;
      entry: string;
      inputs: string[];
    };
    expect(info.entry).toBe('dist/vaultstream.js');
    expect(existsSync(join(ROOT, info.entry))).toBe(true);
    expect(info.inputs).toContain('cli/main.ts');
    expect(info.inputs).toContain('views/migrate.ts');
    expect(info.inputs.every((f) => !f.startsWith('node_modules/'))).toBe(true);
  });

  it('--version prints the version of package.json', async () => {
    const r = await runCli(['--version'], compiled);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it('--help lists the commands', async () => {
    const r = await runCli(['--help'], compiled);
    expect(r.code).toBe(0);
    for (const cmd of [
      'start',
      'ingest',
      'api',
      'streams',
      'devnet',
      'migrate',
      'replay',
      'sql',
      'status',
      'catalogue',
    ])
      expect(r.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
  });

  it('--help and --version load no heavy package', async () => {
    // A resolve hook that writes every module URL it resolves to a file.
    const log = join(tmp, 'modules.log');
    const hooks = join(tmp, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}\n`,
    );
    const register = join(tmp, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    for (const args of [['--help'], ['--version']]) {
      rmSync(log, { force: true });
      await run(process.execPath, ['--import', register, join(ROOT, 'bin', 'vaultstream.mjs'), ...args], {
        cwd: ROOT,
        env: { ...process.env, ...compiled },
      });
      const urls = readFileSync(log, 'utf8').trim().split('\n');
      expect(urls.some((u) => u.endsWith('/dist/vaultstream.js'))).toBe(true);
      const packages = urls.filter((u) => u.includes('/node_modules/'));
      expect(packages.some((u) => u.includes('/node_modules/commander/'))).toBe(true); // the hook saw them
      for (const heavy of HEAVY)
        expect(
          packages.filter((u) => u.includes(`/node_modules/${heavy}`)),
          `${args[0]} loads ${heavy}`,
        ).toEqual([]);
      expect(urls.filter((u) => u.endsWith('.ts'))).toEqual([]);
    }
  });

  it('sql "SELECT 1" answers 1 on an empty data directory', async () => {
    const r = await runCli(['sql', 'SELECT 1', '--format', 'json'], {
      ...compiled,
      VAULTSTREAM_DATA_DIR: join(tmp, 'data'),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ 1: 1 }]);
  });
});
