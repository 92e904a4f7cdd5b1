/**
 * The embedded pipeline end to end through the real CLI: NDJSON replay into the
 * file-backed bus, stream consumers into chDB, views compared with an independently
 * computed ground truth. A consumer killed between its insert and its offset commit
 * (SIGKILL, via a failpoint) and restarted on the same data directory leaves every
 * view exactly right, and replaying the same file again changes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { createStore, type Store } from '../../store/client.ts';
import { runCli } from '../support/cli.ts';
import { buildScenario, registryLines } from '../support/scenario.ts';
import { expectMatchesTruth, viewSnapshot } from '../support/truth.ts';

const dir = mkdtempSync(join(tmpdir(), 'vs-embedded-'));
const dataDir = join(dir, 'data');
const file = join(dir, 'events.ndjson');
const scenario = buildScenario({ seed: 11, transfers: 1500 });
const env = { VAULTSTREAM_DATA_DIR: dataDir, VAULTSTREAM__streams__maxBatchSize: '200' };

async function withStore<T>(fn: (s: Store) => Promise<T>): Promise<T> {
  const store = await createStore(parseConfig({ dataDir }));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

describe('embedded pipeline (chDB + in-process bus)', () => {
  beforeAll(() => {
    const reg = registryLines(['nest-alpha', 'nest-treasuries'], [98866, 1]);
    writeFileSync(file, `${[...reg, ...scenario.lines].join('\n')}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  let first: Record<string, unknown[]>;

  it('survives SIGKILL after an insert and before the commit, then resumes on the same data directory', async () => {
    const killed = await runCli(['replay', file], {
      ...env,
      VAULTSTREAM_FAILPOINTS: 'after-insert-transfers_raw:2',
    });
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await runCli(['streams', '--until-drained'], { ...env, LOG_LEVEL: 'info' });
    expect(resumed.stderr).not.toMatch(/"level":(50|60)/);
    expect(resumed.code).toBe(0);
    // The batch stored before the kill was delivered again and found already stored (an
    // ordinary batch drops only the scenario's few deliberate duplicates, 1 in 50).
    const skips = [...resumed.stderr.matchAll(/"table":"transfers_raw","skipped":(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    expect(Math.max(...skips)).toBeGreaterThan(100);
    first = await withStore(viewSnapshot);
    expectMatchesTruth(first as never, scenario.truth);
  });

  it('sent every bad line to the dead-letter table with its line number and reason', () => {
    const all = first.deadLetters as { topic: string; offset: string; reason: string }[];
    const dl = all.filter((d) => d.topic.startsWith('replay:'));
    expect(dl.map((d) => Number(d.offset))).toEqual(scenario.badLines.map((l) => l + 2));
    const reasons = dl.map((d) => d.reason);
    for (const re of [
      /^not JSON/,
      /^unknown family "nope"/,
      /^invalid transfers record: .*amount: expected a non-negative/,
    ])
      expect(
        reasons.filter((r) => re.test(r)),
        String(re),
      ).toHaveLength(1);
  });

  it('replaying the same file again changes no view, and reports the bad lines with a non-zero exit', async () => {
    const again = await runCli(['replay', file], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toMatch(/rejected 3 lines/);
    for (const l of scenario.badLines) expect(again.stderr).toContain(`:${l + 2}: rejected:`);
    const second = await withStore(viewSnapshot);
    // Every data view is unchanged. The dead-letter audit keys a rejected line by file and line,
    // so those are unchanged too; a record the store rejects is logged once per delivery.
    const replayLetters = (x: typeof first) =>
      (x.deadLetters as { topic: string }[]).filter((d) => d.topic.startsWith('replay:'));
    expect({ ...second, deadLetters: replayLetters(second) }).toEqual({
      ...first,
      deadLetters: replayLetters(first),
    });
  });

  it('stores every family: activity, redemptions, snapshots, source errors and mint steps read back intact', async () => {
    const got = await withStore(async (s) => ({
      tx: await s.query(`SELECT kind, toString(shares) AS shares FROM vaultstream.transactions`),
      req: await s.query(`SELECT state, toString(amount) AS amount FROM vaultstream.redemption_requests`),
      snap: await s.query(`SELECT kind, toString(weight) AS weight FROM vaultstream.snapshots_latest`),
      err: await s.query(`SELECT code, message FROM vaultstream.source_errors`),
      mint: await s.query(`SELECT step, status, fields FROM vaultstream.mint_state`),
    }));
    expect(got.tx).toEqual([{ kind: 'DEPOSIT', shares: '1000000' }]);
    expect(got.req).toEqual([{ state: 'expired', amount: '5000000' }]);
    expect(got.snap).toEqual([{ kind: 'COMPOSITION', weight: '62.5' }]);
    expect(got.err).toEqual([{ code: 'TIMEOUT', message: 'request timed out\tafter 10 s\nretrying' }]);
    expect(got.mint).toEqual([
      { step: 'cctpAttestation', status: 'in_progress', fields: { nonce: '42', "it's": 'a\\b\tc' } },
    ]);
  });

  it('answers SQL over the views from the CLI, read-only by default', async () => {
    const res = await runCli(
      ['sql', 'SELECT vault, holders FROM vaultstream.vault_holders ORDER BY vault', '--format', 'json'],
      env,
    );
    expect(res.code).toBe(0);
    const rows = JSON.parse(res.stdout) as { vault: string; holders: string }[];
    expect(new Map(rows.map((r) => [r.vault, Number(r.holders)]))).toEqual(scenario.truth.holders);
    const count = await runCli(
      ['sql', 'SELECT count() AS n FROM vaultstream.dead_letters', '--format', 'csv'],
      env,
    );
    const before = count.stdout.split('\n')[1];
    const write = await runCli(['sql', "INSERT INTO vaultstream.dead_letters (topic) VALUES ('x')"], env);
    expect(write.code).toBe(2);
    expect(write.stderr).toContain(
      'vaultstream: READ_ONLY: only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN are allowed here (read-only); this is a INSERT statement. `vaultstream sql` is read-only unless --write is given',
    );
    const after = await runCli(
      ['sql', 'SELECT count() AS n FROM vaultstream.dead_letters', '--format', 'csv'],
      env,
    );
    expect(after.stdout).toBe(`n\n${before}\n`);
    const csv = await runCli(['sql', 'SELECT 1 AS a, 2 AS b', '--format', 'csv'], env);
    expect(csv.stdout).toBe('a,b\n1,2\n');
  });
});
