/**
 * A throwaway Kafka cluster for the integration tests and the pipeline benchmark: librdkafka's
 * mock cluster run as a child process (kafka-mock/launcher.c, compiled on first use and cached
 * by source hash under <tmpdir>/vaultstream-kafka-mock). Needs gcc and librdkafka-dev
 * (`apt-get install -y librdkafka-dev`); no JVM, no Docker.
 */
import { type ChildProcessByStdio, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const LAUNCHER_SOURCE = join(here, 'kafka-mock', 'launcher.c');
const CACHE_ROOT = join(tmpdir(), 'vaultstream-kafka-mock');

export interface MockKafkaOptions {
  /** Topics to pre-create (the mock cluster does not implement CreateTopics). */
  topics: string[];
  /** Partitions per topic. */
  partitions: number;
  /** Broker count; default 1. Replication factor is min(brokers, 3). */
  brokers?: number;
}

export interface MockKafka {
  /** Bootstrap addresses, e.g. `['127.0.0.1:40111']`. */
  brokers: string[];
  /** Destroys the cluster and waits for the process to exit. */
  stop(): Promise<void>;
}

let problemCache: string | null | undefined;

/**
 * Why the mock broker cannot be built here, or `undefined` when it can
 * (gcc on PATH and the librdkafka mock header available).
 */
export function kafkaToolchainProblem(): string | undefined {
  if (problemCache === undefined) {
    const gcc = spawnSync('gcc', ['--version'], { encoding: 'utf8' });
    if (gcc.error || gcc.status !== 0) {
      problemCache = 'gcc not found on PATH';
    } else {
      const probe = spawnSync('gcc', ['-E', '-x', 'c', '-', '-o', '/dev/null'], {
        input: '#include <librdkafka/rdkafka.h>\n#include <librdkafka/rdkafka_mock.h>\n',
        encoding: 'utf8',
      });
      problemCache =
        probe.status === 0 ? null : 'librdkafka mock header missing (apt-get install -y librdkafka-dev)';
    }
  }
  return problemCache ?? undefined;
}

/** True when gcc and librdkafka's mock-cluster header are available. */
export function hasKafkaToolchain(): boolean {
  return kafkaToolchainProblem() === undefined;
}

/** Compiles the launcher once per source hash; returns the binary path. */
function launcherBinary(): string {
  const source = readFileSync(LAUNCHER_SOURCE);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(CACHE_ROOT, `kafka-mock-${hash}`);
  const binary = join(dir, 'kafka-mock');
  if (existsSync(binary)) return binary;
  const problem = kafkaToolchainProblem();
  if (problem) throw new Error(`cannot build the kafka mock broker: ${problem}`);
  mkdirSync(dir, { recursive: true });
  // Compile to a private name and rename, so concurrent test workers never run a half-written file.
  const tmp = `${binary}.${process.pid}.tmp`;
  const cc = spawnSync('gcc', ['-O1', '-Wall', LAUNCHER_SOURCE, '-o', tmp, '-lrdkafka'], {
    encoding: 'utf8',
  });
  if (cc.status !== 0) {
    throw new Error(`compiling ${LAUNCHER_SOURCE} failed:\n${cc.stderr || cc.error?.message}`);
  }
  renameSync(tmp, binary);
  return binary;
}

/**
 * Starts a mock Kafka cluster with the topics pre-created and resolves once it
 * listens. The process also exits by itself when this process dies (its stdin closes).
 */
export async function startMockKafka(opts: MockKafkaOptions): Promise<MockKafka> {
  if (opts.topics.length === 0) throw new Error('startMockKafka: at least one topic is required');
  const binary = launcherBinary();
  const args = [
    '--brokers',
    String(opts.brokers ?? 1),
    '--partitions',
    String(opts.partitions),
    ...opts.topics,
  ];
  const child: ChildProcessByStdio<Writable, Readable, Readable> = spawn(binary, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 16_384) stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const bootstrap = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => fail(new Error('kafka mock broker did not print its address within 10 s')),
      10_000,
    );
    const fail = (err: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(err);
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl).trim());
      }
    });
    child.once('error', fail);
    child.once('exit', (code, signal) => {
      fail(new Error(`kafka mock broker exited early (code ${code}, signal ${signal}): ${stderr.trim()}`));
    });
  });

  let stopping: Promise<void> | undefined;
  return {
    brokers: bootstrap.split(',').filter(Boolean),
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.stdin.end();
        child.kill('SIGTERM');
        const killTimer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killTimer);
      })();
      return stopping;
    },
  };
}
