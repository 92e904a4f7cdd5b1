/**
 * The pipeline below the API thread (api.pipelineNice, docs/architecture.md#the-apis-thread; Linux,
 * where a nice value belongs to a thread): once the API thread listens, every other thread of the
 * process runs at the configured nice value when the process runs the pipeline (not in the API-only role) and the API thread at the process's own, threads
 * started later by the main thread take the lowered value, and devnet nodes (each in a session of
 * its own) have their session lowered, those running and those started later. With 0 nothing
 * changes. Nothing is ever raised, and a thread raised on purpose (chDB's MemoryWorker raises
 * itself when privileged) keeps its value.
 *
 * The service runs in this process (runRoles, chDB in a temporary directory): its main thread is
 * this test's, which stays lowered for the rest of this file.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { type Role, runRoles } from '../../cli/roles.ts';
import { silentLogger } from '../../core/log.ts';
import { lowerThreadsExcept, threadId } from '../../core/priority.ts';
import { lowerNodes, startAnvil } from '../../devnet/anvil.ts';
import { embeddedConfig } from '../support/embedded-config.ts';

const linux = process.platform === 'linux';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The nice value of each thread of this process, by kernel id. */
function threadNices(): Map<number, number> {
  return new Map(readdirSync('/proc/self/task').map((t) => [Number(t), getPriority(Number(t))]));
}

/** A new thread's own view of its kernel id, started from this (main) thread. */
async function newThread(): Promise<{ tid: number; stop: () => Promise<number> }> {
  const w = new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.postMessage(Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()));
     setInterval(() => {}, 1000);`,
    { eval: true },
  );
  const tid = await new Promise<number>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  return { tid, stop: () => w.terminate() };
}

async function service(nice: number, roles: Role[] = ['streams', 'api']) {
  const { cfg, dir } = embeddedConfig('vs-api-priority-', { VAULTSTREAM__api__pipelineNice: String(nice) });
  dirs.push(dir);
  return runRoles(cfg, roles, silentLogger);
}

describe.runIf(linux)('api.pipelineNice', () => {
  it('0 leaves every thread at the process priority', async () => {
    const running = await service(0);
    try {
      const apiTid = running.server?.threadId;
      expect(apiTid).toBeGreaterThan(0);
      // None lowered: each at 0, or raised on purpose (chDB's MemoryWorker, when privileged).
      for (const [tid, nice] of threadNices())
        expect({ tid, lowered: nice > 0 }).toEqual({ tid, lowered: false });
      // The API answers (from its thread).
      const addr = running.server?.address();
      if (!addr || typeof addr === 'string') throw new Error('not listening on a port');
      expect((await fetch(`http://127.0.0.1:${addr.port}/v1/vaults/details`)).status).toBe(200);
    } finally {
      await running.stop();
    }
  });

  it('the API-only role lowers nothing: its main thread runs only the API reads', async () => {
    const running = await service(7, ['api']);
    try {
      expect(running.server?.threadId).toBeGreaterThan(0);
      for (const [tid, nice] of threadNices())
        expect({ tid, lowered: nice > 0 }).toEqual({ tid, lowered: false });
    } finally {
      await running.stop();
    }
  });

  it('lowers every thread but the API thread, and the threads started afterwards', async () => {
    expect(getPriority(threadId() as number)).toBe(0);
    const running = await service(7);
    try {
      const apiTid = running.server?.threadId as number;
      expect(apiTid).toBeGreaterThan(0);
      expect(apiTid).not.toBe(threadId());
      const nices = threadNices();
      expect(nices.get(apiTid)).toBe(0);
      // The main thread (store, consumers, settle) and chDB's and libuv's threads.
      expect(nices.get(threadId() as number)).toBe(7);
      const others = [...nices].filter(([tid]) => tid !== apiTid);
      expect(others.length).toBeGreaterThan(3);
      // Each at 7, but a thread raised on purpose (below 0, chDB's MemoryWorker when privileged) keeps its value.
      expect(others.filter(([, nice]) => nice >= 0 && nice !== 7)).toEqual([]);
      expect(others.filter(([, nice]) => nice === 7).length).toBeGreaterThan(3);
      // A thread the main thread starts later (as chDB's pools do) takes its lowered value.
      const later = await newThread();
      expect(getPriority(later.tid)).toBe(7);
      await later.stop();
      // The API still answers, from the thread left at the process's priority.
      const addr = running.server?.address();
      if (!addr || typeof addr === 'string') throw new Error('not listening on a port');
      const res = await fetch(`http://127.0.0.1:${addr.port}/v1/vaults/details`);
      expect(res.status).toBe(200);
    } finally {
      await running.stop();
    }
  });

  it('never raises a thread that is already lower', async () => {
    const t = await newThread();
    try {
      // This thread is at 7 since the test above; raise nothing, lower the new one below it.
      const before = getPriority(threadId() as number);
      expect(lowerThreadsExcept([threadId() as number], 12)).toBeGreaterThan(0);
      expect(getPriority(t.tid)).toBe(12);
      expect(lowerThreadsExcept([threadId() as number], 9)).toBe(0);
      expect(getPriority(t.tid)).toBe(12);
      expect(getPriority(threadId() as number)).toBe(before);
    } finally {
      await t.stop();
    }
  });

  it("lowers the devnet nodes' sessions, running and started later", async () => {
    const autogroupNice = (pid: number) =>
      Number(readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().split(' ').pop());
    const first = await startAnvil({ chainId: 31337 });
    try {
      expect(autogroupNice(first.pgid)).toBe(0);
      lowerNodes(6);
      expect(autogroupNice(first.pgid)).toBe(6);
      const second = await startAnvil({ chainId: 31338 });
      try {
        expect(autogroupNice(second.pgid)).toBe(6);
        // Its RPC still answers.
        const res = await fetch(second.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        });
        expect(((await res.json()) as { result: string }).result).toBe('0x7a6a');
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  });
});
