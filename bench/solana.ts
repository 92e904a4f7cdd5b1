/**
 * `npm run bench -- --only solana`: the Solana follower at a real mint's scale, against the
 * deterministic synthetic mint (devnet/solana/synthetic.ts) served on loopback in this process,
 * the follower alone in a child (bench/solana-follower.ts: its own CPU and peak RSS). For each
 * size (10,000, 100,000 and 1,000,000 token accounts; tiny: 1,000), with 3,000 past transactions
 * and a 400 ms slot clock:
 * - the opening: time from start to the opening published (the follower's phase `following`),
 *   the bytes the node answered, the follower's peak RSS;
 * - 100 changes a minute in the mix a mint sees (transferChecked, plain Transfer, new holders,
 *   mintTo, burn, transfer then close, failed ones): the lag from each change that moves shares
 *   to the follower's committed cursor passing its slot (max; the failed ones' apart), the
 *   follower's CPU seconds per change, and its holder count against the mint's at the end;
 * - an idle minute: requests and bytes (both ways, websocket included);
 * and the opening again for a Token-2022 mint of the largest size. Targets are stated
 * for 1,000,000 accounts; the idle targets at every size, over a whole idle minute. The opening's
 * time counts from the child's start (its module loading included).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SyntheticMint } from '../devnet/solana/synthetic.ts';
import { startSyntheticRpc } from '../devnet/solana/synthetic-rpc.ts';
import type { FollowerProgress } from '../ingest/solana/follower.ts';
import { type BenchRow, benchArgs, round, row, writeReport } from './report.ts';

const { values, size, out } = benchArgs(
  'solana',
  { accounts: undefined, 'window-s': undefined, 'idle-s': undefined, history: '3000' },
  {
    tiny: { accounts: '1000', 'window-s': '10', 'idle-s': '10', history: '300' },
    full: { accounts: '10000,100000,1000000', 'window-s': '60', 'idle-s': '60' },
  },
);
const sizes = values.accounts.split(',').map(Number);
const windowS = Number(values['window-s']);
const idleS = Number(values['idle-s']);
const FULL = 1_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Report {
  progress: FollowerProgress;
  cpuS: number;
  peakRssMb: number;
}

/** The rows of one size; `openingOnly`: the opening's rows alone (the Token-2022 run). */
async function measure(
  accounts: number,
  program: 'token' | 'token-2022',
  openingOnly = false,
): Promise<BenchRow[]> {
  const mint = new SyntheticMint({ accounts, history: Number(values.history), seed: accounts, program });
  // The node's own address cache warmed up front: its base58 work is no part of the follower's time.
  for (let i = 0; i < mint.count; i++) mint.pubkey(i);
  const rpc = await startSyntheticRpc(mint);
  const slots = setInterval(() => mint.advance(), 400);
  const dir = mkdtempSync(join(tmpdir(), 'vs-bench-solana-'));
  const child = fork(join(import.meta.dirname, 'solana-follower.ts'), [rpc.url, mint.mint, dir], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let last: Report | undefined;
  child.on('message', (m) => {
    last = m as Report;
  });
  const until = async (ok: (r: Report) => boolean, timeoutS: number, what: string) => {
    const end = performance.now() + timeoutS * 1000;
    while (!(last && ok(last))) {
      if (performance.now() > end) throw new Error(`solana bench: ${what} not within ${timeoutS} s`);
      await sleep(20);
    }
    return last;
  };
  const n = `${accounts.toLocaleString('en')}${program === 'token' ? '' : ' Token-2022'}`;
  const at = accounts === FULL;
  try {
    const t0 = performance.now();
    const opened = await until((r) => r.progress.phase === 'following', 900, 'the opening');
    const openingS = (performance.now() - t0) / 1000;
    const openingBytes = rpc.stats.bytesTotal;
    const peakOpening = opened.peakRssMb;
    const openingCpu = opened.cpuS;
    console.error(
      `solana ${n}: opening ${round(openingS, 1)} s, ${round(openingBytes / 1e6, 1)} MB, peak ${round(peakOpening)} MB`,
    );

    const openingRows = [
      row(
        `opening, ${n} accounts: time to published`,
        round(openingS, 1),
        's',
        { text: '<= 120 s', bound: 120, better: 'lower' },
        at,
      ),
      row(`opening, ${n} accounts: follower CPU`, round(openingCpu, 1), 'CPU-s'),
      row(`opening, ${n} accounts: bytes answered`, round(openingBytes / 1e6, 1), 'MB'),
      row(
        `opening, ${n} accounts: follower peak RSS`,
        round(peakOpening),
        'MB',
        { text: '<= 1024 MB', bound: 1024, better: 'lower' },
        at,
      ),
    ];
    if (openingOnly) return openingRows;

    // 100 changes a minute.
    const cpu0 = (await until(() => true, 5, 'a report')).cpuS;
    // A failed transaction changes no balance and no account (no notice wakes the follower for
    // it): its lag is kept apart, the target is on the changes that move shares.
    const made: { slot: number; at: number; failed: boolean }[] = [];
    const failedLags: number[] = [];
    const lags: number[] = [];
    const watch = setInterval(() => {
      while (made.length && last && last.progress.slot >= made[0].slot) {
        const m = made.shift() as (typeof made)[number];
        (m.failed ? failedLags : lags).push(performance.now() - m.at);
      }
    }, 10);
    const changes = Math.round((windowS / 60) * 100);
    for (let i = 0; i < changes; i++) {
      mint.advance();
      const tx = mint.transact();
      made.push({ slot: tx.slot, at: performance.now(), failed: Boolean(tx.err) });
      await sleep(600);
    }
    await until(() => made.length === 0, 60, 'the changes');
    clearInterval(watch);
    const cpuPerChange = ((last as Report).cpuS - cpu0) / changes;
    const maxLagS = Math.max(...lags) / 1000;
    const sorted = [...lags].sort((a, b) => a - b);
    const p95LagS = (sorted[Math.floor(sorted.length * 0.95)] ?? 0) / 1000;
    await sleep(500);
    const wrongHolders = Math.abs((last as Report).progress.holders - mint.balances().size);
    console.error(
      `solana ${n}: ${changes} changes, max lag ${round(maxLagS, 2)} s, ${round(cpuPerChange, 4)} CPU-s each`,
    );

    // An idle minute.
    rpc.resetStats();
    await sleep(idleS * 1000);
    const perMin = 60 / idleS;
    const idleRequests = rpc.stats.requests * perMin;
    const idleBytes = (rpc.stats.bytesTotal + rpc.stats.bytesIn + rpc.stats.wsBytes) * perMin;
    const peak = (last as Report).peakRssMb;
    return [
      ...openingRows,
      row(
        `100 changes/min, ${n} accounts: max lag`,
        round(maxLagS, 2),
        's',
        { text: '<= 5 s', bound: 5, better: 'lower' },
        at,
        { p95LagS: round(p95LagS, 3), failedMaxLagS: round(Math.max(0, ...failedLags) / 1000, 2) },
      ),
      row(
        `100 changes/min, ${n} accounts: CPU per change`,
        round(cpuPerChange, 4),
        'CPU-s',
        { text: '<= 0.05 CPU-s', bound: 0.05, better: 'lower' },
        at,
      ),
      row(`100 changes/min, ${n} accounts: holders wrong at the end`, wrongHolders, 'holders', {
        text: '0',
        bound: 0,
        better: 'lower',
      }),
      // A window shorter than a minute may see no idle round at all: the target needs a whole one.
      row(
        `idle minute, ${n} accounts: requests`,
        round(idleRequests, 1),
        'requests',
        { text: '<= 20', bound: 20, better: 'lower' },
        idleS >= 60,
      ),
      row(
        `idle minute, ${n} accounts: bytes`,
        round(idleBytes / 1000, 1),
        'KB',
        { text: '<= 50 KB', bound: 50, better: 'lower' },
        idleS >= 60,
      ),
      row(`${n} accounts: follower peak RSS, whole run`, round(peak), 'MB'),
    ];
  } finally {
    clearInterval(slots);
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
    await rpc.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: BenchRow[] = [];
for (const accounts of sizes) rows.push(...(await measure(accounts, 'token')));
// Token-2022 (170-byte accounts, the mint filter alone) at the largest size: the opening.
rows.push(...(await measure(Math.max(...sizes), 'token-2022', true)));
writeReport(out, { name: 'solana', size, rows, sizes, windowS, idleS, history: Number(values.history) });
