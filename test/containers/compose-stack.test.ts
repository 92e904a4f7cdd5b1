/**
 * The docker-compose stack in miniature: a real Kafka broker (KRaft) and a real ClickHouse server,
 * started with testcontainers, and the CLI run against them as separate processes, the way the
 * compose roles run:
 *
 *   migrate  ->  streams (background)  ->  replay test/fixtures/small.ndjson  ->  poll
 *   `sql "SELECT count() FROM vaultstream.transfers_raw" --format json` until it equals the number
 *   of transfer lines in the fixture.
 *
 * ClickHouse gets deploy/clickhouse/users.d/vaultstream.xml, so the CLI runs as the compose
 * writer user `vaultstream`, and the read-only `analyst` user is checked too.
 *
 * Needs a container runtime (Docker or compatible). Without one the suite is skipped, visibly by
 * name. SKIP_CONTAINER_TESTS=1 skips it on purpose (e.g. a laptop that should not pull images).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient } from '@clickhouse/client';
import { ClickHouseContainer, type StartedClickHouseContainer } from '@testcontainers/clickhouse';
import { KafkaContainer, type StartedKafkaContainer } from '@testcontainers/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { getContainerRuntimeClient, Network, type StartedNetwork } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'bin/vaultstream.mjs');
const FIXTURE = 'test/fixtures/small.ndjson';
const USERS_XML = join(ROOT, 'deploy/clickhouse/users.d/vaultstream.xml');

// cp-kafka 7.9.0 is Apache Kafka 3.9.0, the broker line docker-compose.yml pins (apache/kafka 3.9.1);
// @testcontainers/kafka's KafkaContainer drives Confluent's image.
const KAFKA_IMAGE = 'confluentinc/cp-kafka:7.9.0';
const KAFKA_PORT = 9093; // the listener KafkaContainer advertises to the host
const CLICKHOUSE_IMAGE = 'clickhouse/clickhouse-server:25.8';

const TOPIC_PREFIX = 'vaultstream.';
const FAMILIES = [
  'registry',
  'blocks',
  'transfers',
  'activity',
  'rates',
  'fees',
  'redemptions',
  'roles',
  'operators',
  'fee_rates',
  'snapshots',
  'mint_steps',
  'source_errors',
  'dlq',
];
const WRITER_PASSWORD = 'writer-test-password';
const ANALYST_PASSWORD = 'analyst-test-password';

/** Why the suite cannot run here, or null when it can. */
async function unavailableReason(): Promise<string | null> {
  if (process.env.SKIP_CONTAINER_TESTS === '1') return 'SKIP_CONTAINER_TESTS=1';
  try {
    await getContainerRuntimeClient();
    return null;
  } catch (err) {
    return `no container runtime: ${err instanceof Error ? err.message : String(err)}`;
  }
}

const skipReason = await unavailableReason();
const SUITE = 'container suite (Kafka + ClickHouse server)';
const suite = skipReason === null ? describe : describe.skip;
const suiteName = skipReason === null ? SUITE : `${SUITE} skipped: ${skipReason}`;
// The default reporter names only the file of a skipped suite; say why here, so a skip is never silent.
if (skipReason !== null) console.warn(suiteName);

/** A fixture line is a transfer when its family/topic names the transfers family. */
function isTransferLine(line: string): boolean {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return false;
  }
  if (typeof obj !== 'object' || obj === null) return false;
  const rec = obj as Record<string, unknown>;
  return ['family', 'topic', 'type', 'kind', 'stream'].some((k) => {
    const v = rec[k];
    return typeof v === 'string' && (v === 'transfers' || v === 'transfer' || v.endsWith('.transfers'));
  });
}

function countTransferLines(file: string): number {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const n = lines.filter(isTransferLine).length;
  if (n === 0)
    throw new Error(
      `${FIXTURE} has ${lines.length} lines but none is recognisably a transfer ` +
        `(expected a "family" or "topic" field of "transfers")`,
    );
  return n;
}

/** The first number in `sql --format json` output, whatever its shape (rows array, ClickHouse JSON, quoted UInt64). */
function extractCount(stdout: string): number {
  const walk = (v: unknown): number => {
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && /^\d+$/.test(v.trim())) return Number(v.trim());
    if (Array.isArray(v)) return v.length > 0 ? walk(v[0]) : Number.NaN;
    if (typeof v === 'object' && v !== null) {
      const o = v as Record<string, unknown>;
      if ('data' in o) return walk(o.data);
      for (const x of Object.values(o)) {
        const n = walk(x);
        if (!Number.isNaN(n)) return n;
      }
    }
    return Number.NaN;
  };
  const text = stdout.trim();
  try {
    return walk(JSON.parse(text));
  } catch {
    // Several JSON documents (JSONEachRow) or a bare number.
    const m = /(\d+)/.exec(text);
    return m ? Number(m[1]) : Number.NaN;
  }
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

function describeRun(args: string[], r: CliResult): string {
  return `vaultstream ${args.join(' ')} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

async function stopProcess(child: ChildProcess | undefined, graceMs = 20_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

suite(suiteName, () => {
  let kafka: StartedKafkaContainer | undefined;
  let clickhouse: StartedClickHouseContainer | undefined;
  let streams: ChildProcess | undefined;
  let streamsOutput = '';
  let dataDir = '';
  let env: NodeJS.ProcessEnv = {};
  let network: StartedNetwork | undefined;

  beforeAll(async () => {
    // users.d admits its users only from CLICKHOUSE_ALLOWED_NETWORK, the compose project's network:
    // here a network of our own, whose gateway is where the host's mapped-port connections come from.
    network = await new Network().start();
    const runtime = await getContainerRuntimeClient();
    const info = await runtime.network.getById(network.getId()).inspect();
    const subnet = (info.IPAM?.Config ?? []).map((c) => c.Subnet).find((s) => s && !s.includes(':'));
    if (!subnet) throw new Error(`network ${network.getName()} has no IPv4 subnet`);
    const [k, ch] = await Promise.all([
      new KafkaContainer(KAFKA_IMAGE).withKraft().start(),
      new ClickHouseContainer(CLICKHOUSE_IMAGE)
        .withCopyFilesToContainer([
          { source: USERS_XML, target: '/etc/clickhouse-server/users.d/vaultstream.xml', mode: 0o644 },
        ])
        .withNetwork(network)
        .withEnvironment({
          CLICKHOUSE_WRITER_PASSWORD: WRITER_PASSWORD,
          CLICKHOUSE_ANALYST_PASSWORD: ANALYST_PASSWORD,
          CLICKHOUSE_ALLOWED_NETWORK: subnet,
        })
        .start(),
    ]);
    kafka = k;
    clickhouse = ch;
    const brokers = `${k.getHost()}:${k.getMappedPort(KAFKA_PORT)}`;

    // What the compose `kafka-topics` one-shot does: every family, 4 partitions. Through kafkajs,
    // so a protocol mismatch between kafkajs 2.2.4 and the broker shows up here first.
    const admin = new Kafka({
      clientId: 'compose-stack-test',
      brokers: [brokers],
      logLevel: logLevel.WARN,
    }).admin();
    await admin.connect();
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: FAMILIES.map((f) => ({
          topic: `${TOPIC_PREFIX}${f}`,
          numPartitions: 4,
          replicationFactor: 1,
        })),
      });
    } finally {
      await admin.disconnect();
    }

    dataDir = mkdtempSync(join(tmpdir(), 'vaultstream-containers-'));
    env = {
      ...process.env,
      CLICKHOUSE_URL: ch.getHttpUrl(),
      CLICKHOUSE_USER: 'vaultstream',
      CLICKHOUSE_PASSWORD: WRITER_PASSWORD,
      CLICKHOUSE_DATABASE: 'vaultstream',
      CLICKHOUSE_CLUSTER: '',
      KAFKA_BROKERS: brokers,
      SCHEMA_REGISTRY_URL: '',
      TOPIC_PREFIX,
      VAULTSTREAM_DATA_DIR: dataDir,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
  }, 600_000);

  afterAll(async () => {
    await stopProcess(streams);
    await Promise.allSettled([kafka?.stop(), clickhouse?.stop()]);
    await network?.stop().catch(() => {});
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('migrates, streams a replayed fixture into transfers_raw, and counts it with `sql`', async () => {
    const expected = countTransferLines(join(ROOT, FIXTURE));

    const migrate = await runCli(['migrate'], env);
    expect(migrate.code, describeRun(['migrate'], migrate)).toBe(0);

    const child = spawn(process.execPath, [CLI, 'streams'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    streams = child;
    const keep = (chunk: Buffer) => {
      streamsOutput = (streamsOutput + chunk.toString()).slice(-20_000);
    };
    streams.stdout?.on('data', keep);
    streams.stderr?.on('data', keep);

    const replay = await runCli(['replay', FIXTURE], env);
    expect(replay.code, describeRun(['replay', FIXTURE], replay)).toBe(0);

    const query = 'SELECT count() FROM vaultstream.transfers_raw';
    const sqlArgs = ['sql', query, '--format', 'json'];
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    // Done early when streams exits: the check after the wait then fails at once.
    const outcome = await vi.waitFor(
      async () => {
        if (exited()) return 'exited';
        const last = await runCli(sqlArgs, env);
        const count = last.code === 0 ? extractCount(last.stdout) : Number.NaN;
        expect(count, `${describeRun(sqlArgs, last)}\n--- streams output (tail)\n${streamsOutput}`).toBe(
          expected,
        );
        return 'stored';
      },
      { timeout: 150_000, interval: 2_000 },
    );
    if (outcome === 'exited')
      throw new Error(`streams exited early (${streams.exitCode ?? streams.signalCode}):\n${streamsOutput}`);
  }, 300_000);

  it('gives the analyst user reads of vaultstream and no writes', async () => {
    const client = createClient({
      url: clickhouse!.getHttpUrl(),
      username: 'analyst',
      password: ANALYST_PASSWORD,
    });
    try {
      const rs = await client.query({
        query: 'SELECT count() AS n FROM vaultstream.transfers_raw',
        format: 'JSON',
      });
      const body = (await rs.json()) as { data: Array<{ n: string | number }> };
      // The test before waited for every transfer of the fixture to land: the analyst sees them all.
      expect(Number(body.data[0].n)).toBe(countTransferLines(join(ROOT, FIXTURE)));
      await expect(
        client.command({ query: 'CREATE TABLE vaultstream.analyst_probe (x UInt8) ENGINE = Memory' }),
      ).rejects.toThrow(/readonly|privileges|ACCESS_DENIED/i);
      await expect(
        client.command({
          query: 'INSERT INTO vaultstream.transfers_raw SELECT * FROM vaultstream.transfers_raw LIMIT 0',
        }),
      ).rejects.toThrow(/readonly|privileges|ACCESS_DENIED/i);
    } finally {
      await client.close();
    }
  }, 60_000);
});
