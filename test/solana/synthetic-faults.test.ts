/**
 * The Solana follower against the deterministic synthetic mint (devnet/solana/synthetic.ts:
 * 2,000 token accounts, 8% at zero, owners with two accounts, the top holder above 2^63, a
 * history, every kind of change) through the real pipeline (in-process bus, consumers, chDB):
 * the views must equal the mint's own balances after the opening, after each kind of change
 * (plain `Transfer` included, seen through the account subscription within a round), and the
 * faults of a node must never show as a wrong number: an account left out of a re-read (the
 * supply check refuses it), a slot 5,000 behind (that node's fault: the watermark never goes
 * back), a full read that stalls or is cut (retried), one slower than the request timeout but
 * moving (accepted). Idle polls ask with `until`; a change costs one journal line, not the state.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { SyntheticMint, type TxKind } from '../../devnet/solana/synthetic.ts';
import { type SyntheticRpc, startSyntheticRpc } from '../../devnet/solana/synthetic-rpc.ts';
import { type SolanaIngest, startSolanaIngest } from '../../ingest/solana/index.ts';
import { solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';

const mint = new SyntheticMint({ accounts: 2000, history: 150, seed: 34 });
let good: SyntheticRpc;
let other: SyntheticRpc;
let p: Pipeline;
let ing: SolanaIngest;
let now = 1_800_000_000_000;
const HOUR = 3_600_000;

const vault = () => ({ ...solanaVault(), solana: { ...solanaVault().solana, mintAddress: mint.mint } });

async function balancesView(): Promise<Map<string, bigint>> {
  const rows = await p.store.query<{ holder: string; balance_raw: string }>(
    `SELECT holder, toString(balance_raw) AS balance_raw FROM ${p.store.database}.balances
     WHERE vault = 'nest-alpha' AND chain_id = 101`,
  );
  return new Map(rows.map((r) => [r.holder, BigInt(r.balance_raw)]));
}

async function watermark(): Promise<number> {
  const [w] = await p.store.query<{ b: string }>(
    `SELECT toString(block_number) AS b FROM ${p.store.database}.chain_watermarks WHERE chain_id = 101`,
  );
  return Number(w?.b ?? 0);
}

/** Waits until the views equal the mint's balances (the follower keeps running). */
async function viewsEqualTruth(timeout = 20_000) {
  await vi.waitFor(
    async () => {
      await p.drained();
      expect(await balancesView()).toEqual(mint.balances());
    },
    { timeout, interval: 100 },
  );
}

/** A change, which also wakes the follower's round (its rounds are a minute apart otherwise). */
const change = (kind: TxKind = 'transferChecked') => {
  mint.advance();
  return mint.transact(kind);
};

const sourceErrors = async (like: string) =>
  p.store.query<{ code: string; message: string }>(
    `SELECT code, message FROM ${p.store.database}.source_errors WHERE chain_id = 101 AND message LIKE {like:String}`,
    { like },
  );

beforeAll(async () => {
  good = await startSyntheticRpc(mint);
  other = await startSyntheticRpc(mint);
  p = await startPipeline({
    config: {
      vaults: [vault()],
      solana: {
        // The other node first: it answers well until a test makes it fail.
        rpcUrls: [other.url, good.url],
        wsUrls: [good.url.replace('http', 'ws')],
        pollIntervalMs: 50,
        subscribedPollIntervalMs: 60_000,
        backoffMs: 5,
        maxBackoffMs: 50,
        requestTimeoutMs: 400,
        reconcileIntervalMs: HOUR,
        transactionBatchSize: 20,
      },
    },
  });
  ing = startSolanaIngest({
    config: p.config,
    bus: p.bus,
    codec: p.codec,
    log: silentLogger,
    clock: () => now,
  });
}, 60_000);

afterAll(async () => {
  await ing?.stop();
  await p?.close();
  await good?.close();
  await other?.close();
});

describe('the Solana follower on a synthetic mint', () => {
  it('opens with a streamed base64 read, the history in batches, and the views equal the mint', async () => {
    await vi.waitFor(() => expect(ing.progress()[0].phase).toBe('following'), { timeout: 30_000 });
    await viewsEqualTruth();
    const reads = [...good.stats.log, ...other.stats.log].filter((c) => c.method === 'getProgramAccounts');
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads)
      expect(r.params[1]).toMatchObject({ encoding: 'base64', dataSlice: { offset: 32, length: 40 } });
    // The history's transactions came in batches of 20, not one request each.
    const txCalls = (good.stats.calls.getTransaction ?? 0) + (other.stats.calls.getTransaction ?? 0);
    expect(txCalls).toBeGreaterThanOrEqual(100);
    expect(good.stats.requests + other.stats.requests).toBeLessThan(txCalls);
    expect(ing.progress()[0].subscribed).toBe(true);
  }, 60_000);

  it('follows every kind of change; a plain Transfer shows within a round, through the subscription', async () => {
    mint.advance();
    const plain = mint.transact('transfer');
    expect(plain.listsMint).toBe(false);
    // Rounds every 60 s and a re-read every hour: only the notice can bring it in time.
    await viewsEqualTruth(10_000);
    const kinds: TxKind[] = [
      'transferChecked',
      'newHolder',
      'mintTo',
      'burn',
      'transferClose',
      'failed',
      'transfer',
    ];
    for (let i = 0; i < 21; i++) {
      mint.advance();
      mint.transact(kinds[i % kinds.length]);
    }
    await viewsEqualTruth();
  }, 60_000);

  it('idle rounds poll the mint with `until`; a change appends one journal line, the base stays', async () => {
    const dir = join(p.config.dataDir, 'ingest', 'solana-nest-alpha');
    const base = readdirSync(dir).find((f) => f.startsWith('base-')) as string;
    const journal = readdirSync(dir).find((f) => f.startsWith('journal-')) as string;
    const baseStat = statSync(join(dir, base));
    const lines = () => readFileSync(join(dir, journal), 'utf8').split('\n').filter(Boolean);
    const before = lines().length;
    good.resetStats();
    other.resetStats();
    change();
    await viewsEqualTruth();
    const added = lines().slice(before);
    expect(added.length).toBeGreaterThan(0);
    expect(added.length).toBeLessThanOrEqual(3);
    for (const l of added) expect(l.length).toBeLessThan(4000);
    expect(statSync(join(dir, base)).mtimeMs).toBe(baseStat.mtimeMs);
    const polls = [...good.stats.log, ...other.stats.log].filter(
      (c) => c.method === 'getSignaturesForAddress' && c.params[0] === mint.mint,
    );
    expect(polls.length).toBeGreaterThan(0);
    for (const c of polls) expect((c.params[1] as { until?: string }).until).toBeTruthy();
  }, 60_000);

  it('a re-read without the top holder changes nothing and is a source error; the next one corrects', async () => {
    const holders = (await balancesView()).size;
    const top = mint.owner(mint.topAccount());
    good.faults.omitTop = true;
    other.faults.omitTop = true;
    now += HOUR;
    change();
    // Until the read is refused (a source error) or taken (the top holder's balance burnt).
    await vi.waitFor(
      async () => {
        await p.drained();
        const refused = (await sourceErrors('%add up to%')).length > 0;
        expect(refused || (await balancesView()).get(top) !== mint.balances().get(top)).toBe(true);
      },
      { timeout: 20_000 },
    );
    await p.drained();
    const view = await balancesView();
    expect(view.size).toBe(holders);
    expect(view.get(top)).toBe(mint.balances().get(top));
    expect((await sourceErrors('%add up to%'))[0].code).toBe('SUPPLY_MISMATCH');
    good.faults.omitTop = false;
    other.faults.omitTop = false;
    const readAt = now + HOUR;
    now = readAt;
    change();
    await vi.waitFor(() => expect(ing.progress()[0].rereadAt).toBe(readAt), { timeout: 20_000 });
    await viewsEqualTruth();
  }, 60_000);

  it('a node 5,000 slots behind is that node’s fault: the watermark never goes back', async () => {
    await vi.waitFor(async () => expect(await watermark()).toBeGreaterThan(0), { timeout: 10_000 });
    const marks = [await watermark()];
    other.faults.slotsBehind = 5000;
    const sampling = setInterval(() => void watermark().then((w) => marks.push(w)), 50);
    for (let i = 0; i < 5; i++) {
      change();
      await new Promise((r) => setTimeout(r, 100));
    }
    await vi.waitFor(async () => expect(await watermark()).toBeGreaterThanOrEqual(mint.slot - 1), {
      timeout: 20_000,
    });
    clearInterval(sampling);
    marks.push(await watermark());
    for (let i = 1; i < marks.length; i++) expect(marks[i]).toBeGreaterThanOrEqual(marks[i - 1]);
    expect((await sourceErrors('%behind%')).length).toBeGreaterThan(0);
    await viewsEqualTruth();
    other.faults.slotsBehind = 0;
  }, 60_000);

  it('a full read slower than the request timeout but moving is taken; a stalled or cut one is retried', async () => {
    good.faults.paceMs = 150; // 4 parts: 600 ms in all, against a 400 ms timeout
    other.faults.paceMs = 150;
    const readAt = now + HOUR;
    now = readAt;
    change('transfer');
    await vi.waitFor(() => expect(ing.progress()[0].rereadAt).toBe(readAt), { timeout: 20_000 });
    good.faults.paceMs = 0;
    other.faults.paceMs = 0;
    good.faults.stallReads = 1;
    other.faults.cutReads = 1;
    const again = now + HOUR;
    now = again;
    change();
    await vi.waitFor(() => expect(ing.progress()[0].rereadAt).toBe(again), { timeout: 20_000 });
    await viewsEqualTruth();
  }, 60_000);
});
