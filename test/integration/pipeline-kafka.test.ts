/**
 * The distributed path through a real Kafka-protocol broker (librdkafka's mock
 * cluster): `replay` publishes to Kafka, `streams` consumes into chDB. A consumer
 * killed (SIGKILL) after its insert and before its offset commit, then restarted,
 * leaves every view exactly right; replaying the same file again changes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { DATA_FAMILIES } from '../../schemas/families.ts';
import { createStore } from '../../store/client.ts';
import { runCli } from '../support/cli.ts';
import { kafkaToolchainProblem, type MockKafka, startMockKafka } from '../support/kafka-broker.ts';
import { buildScenario, registryLines } from '../support/scenario.ts';
import { expectMatchesTruth, viewSnapshot } from '../support/truth.ts';

const problem = kafkaToolchainProblem();
const suite = problem ? describe.skip : describe;
const name = problem
  ? `pipeline through Kafka skipped: kafka mock broker unavailable: ${problem}`
  : 'pipeline through Kafka (librdkafka mock cluster + chDB)';

suite(name, () => {
  const dir = mkdtempSync(join(tmpdir(), 'vs-kafka-'));
  const dataDir = join(dir, 'data');
  const file = join(dir, 'events.ndjson');
  const scenario = buildScenario({ seed: 23, transfers: 1200 });
  let kafka: MockKafka;
  let env: Record<string, string>;

  beforeAll(async () => {
    writeFileSync(
      file,
      `${[...registryLines(['nest-alpha', 'nest-treasuries'], [98866, 1]), ...scenario.lines].join('\n')}\n`,
    );
    kafka = await startMockKafka({
      topics: [...DATA_FAMILIES, 'dlq'].map((f) => `vaultstream.${f}`),
      partitions: 4,
    });
    env = {
      VAULTSTREAM_DATA_DIR: dataDir,
      KAFKA_BROKERS: kafka.brokers.join(','),
      VAULTSTREAM__bus__sessionTimeoutMs: '6000',
      VAULTSTREAM__streams__maxBatchSize: '150',
    };
  });
  afterAll(async () => {
    await kafka?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function snapshot() {
    const store = await createStore(parseConfig({ dataDir }));
    try {
      return await viewSnapshot(store);
    } finally {
      await store.close();
    }
  }

  let first: Awaited<ReturnType<typeof snapshot>>;

  it('publishes through Kafka, survives a consumer SIGKILL between insert and commit, and stores every event once', async () => {
    const pub = await runCli(['replay', file], env);
    expect(pub.code).toBe(1); // the scenario's bad lines
    expect(pub.stdout).toMatch(/rejected 3 lines/);
    const killed = await runCli(['streams', '--until-drained'], {
      ...env,
      VAULTSTREAM_FAILPOINTS: 'after-insert-transfers_raw:3',
    });
    expect(killed.signal).toBe('SIGKILL');
    const resumed = await runCli(['streams', '--until-drained'], { ...env, LOG_LEVEL: 'info' });
    expect(resumed.code).toBe(0);
    const skips = [...resumed.stderr.matchAll(/"table":"transfers_raw","skipped":(\d+)/g)].map((m) =>
      Number(m[1]),
    );
    expect(Math.max(0, ...skips)).toBeGreaterThan(50);
    first = await snapshot();
    expectMatchesTruth(first as never, scenario.truth);
    expect((first.deadLetters as unknown[]).length).toBe(4); // 3 bad lines + 1 record the store rejects
  }, 240_000);

  it('replaying the same file through Kafka again changes no view', async () => {
    await runCli(['replay', file], env);
    const again = await runCli(['streams', '--until-drained'], env);
    expect(again.code).toBe(0);
    const second = await snapshot();
    // Data views unchanged; the store-rejected record is logged once per delivery in the audit.
    expect({ ...second, deadLetters: [] }).toEqual({ ...first, deadLetters: [] });
  }, 240_000);
});
