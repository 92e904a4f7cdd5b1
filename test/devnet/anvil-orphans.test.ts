/**
 * No anvil outlives the process that started it: a process with two nodes is killed
 * with SIGKILL (no exit hook runs), and every process of the nodes' groups (wrapper,
 * watcher, anvil) must be gone within seconds. The nodes also run outside the
 * parent's process group, so a terminal's Ctrl-C reaches only the parent.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

/** Pids of the live processes (not zombies) whose process group is `pgid`, with their command names. */
function groupMembers(pgid: number): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing parenthesis.
    const close = stat.lastIndexOf(')');
    const [state, , pgrp] = stat.slice(close + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z')
      out.push({ pid: Number(d), comm: stat.slice(stat.indexOf('(') + 1, close) });
  }
  return out;
}

describe('anvil child processes', () => {
  it('die with their parent on SIGKILL, and run outside its process group', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '..', 'support', 'devnet-anvil-child.ts')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    const nodes = await new Promise<{ pgid: number; rpcUrl: string; home: string }[]>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      child.once('exit', (code) => reject(new Error(`child exited with ${code}: ${out}`)));
    });
    const exited = new Promise((r) => child.once('exit', r));
    try {
      expect(nodes).toHaveLength(2);
      for (const n of nodes) {
        const members = groupMembers(n.pgid);
        expect(members.map((m) => m.comm)).toContain('anvil');
        // Not in the parent's group: a Ctrl-C to the parent's foreground group never reaches anvil.
        expect(n.pgid).not.toBe(child.pid);
        expect(members.some((m) => m.pid === child.pid)).toBe(false);
        expect((await fetch(n.rpcUrl, { method: 'POST', body: '{}' }).catch(() => null)) !== null).toBe(true);
      }
      child.kill('SIGKILL');
      await exited;
      await vi.waitFor(
        () => {
          for (const n of nodes) {
            expect(groupMembers(n.pgid), `group ${n.pgid}`).toEqual([]);
            // The wrapper removes the node's HOME (anvil's on-disk states) once anvil is gone.
            expect(existsSync(n.home), n.home).toBe(false);
          }
        },
        { timeout: 5_000, interval: 100 },
      );
    } finally {
      for (const n of nodes)
        for (const m of groupMembers(n.pgid)) {
          try {
            process.kill(m.pid, 'SIGKILL');
          } catch {}
        }
    }
  }, 30_000);
});
