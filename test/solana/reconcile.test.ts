/**
 * Reconciliation of Solana share holders through the real pipeline (stand-in RPC ->
 * ingester -> in-process bus -> consumers -> chDB views), on a Token-2022 mint (its
 * 170-byte accounts escape a 165-byte dataSize filter). Without an account subscription
 * (this stand-in has no websocket) a plain SPL `Transfer`, which does not list the mint,
 * is not seen; the periodic full read must bring `balances` / `vault_holders` on chain
 * 101 back to the ledger's state with supply unchanged, count a transaction after the
 * read slot once, and a crash between saving and publishing the corrections must not
 * apply them twice.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Bus } from '../../bus/types.ts';
import { silentLogger } from '../../core/log.ts';
import { correctionId } from '../../ingest/solana/balances.ts';
import { type SolanaIngest, startSolanaIngest } from '../../ingest/solana/index.ts';
import { Journal } from '../../ingest/solana/journal.ts';
import { publisher } from '../../ingest/solana/publish.ts';
import { address, signature } from '../fixtures/solana/keys.ts';
import { MINT, solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';
import type { Standin } from '../support/standins/server.ts';
import { SolanaLedger, startSolanaRpc, TOKEN_2022_PROGRAM } from '../support/standins/solana-rpc.ts';

const [A, B, C, D, E, F] = ['a', 'b', 'c', 'd', 'e', 'f'].map((l) => address(`holder-${l}`));
const INTERVAL = 60_000;
const ledger = new SolanaLedger();
ledger.mintPrograms.set(MINT, TOKEN_2022_PROGRAM);
let rpc: Standin;
let p: Pipeline;
let now = 1_800_000_000_000;
let n = 0;
const tx = (changes: [string, bigint][], plainTransfer = false) =>
  ledger.transact(
    signature(`rtx-${++n}`),
    MINT,
    changes.map(([owner, delta]) => ({ owner, delta })),
    { plainTransfer },
  );
const total = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
let ing: SolanaIngest | undefined;

async function balancesView(): Promise<Map<string, bigint>> {
  const rows = await p.store.query<{ holder: string; balance_raw: string }>(
    `SELECT holder, toString(balance_raw) AS balance_raw FROM ${p.store.database}.balances
     WHERE vault = 'nest-alpha' AND chain_id = 101`,
  );
  return new Map(rows.map((r) => [r.holder, BigInt(r.balance_raw)]));
}

async function viewHolders(): Promise<number> {
  const [vh] = await p.store.query<{ holders: string }>(
    `SELECT toString(holders) AS holders FROM ${p.store.database}.vault_holders WHERE vault = 'nest-alpha'`,
  );
  return Number(vh?.holders ?? 0);
}

async function viewSupply(): Promise<bigint> {
  const [s] = await p.store.query<{ s: string }>(
    `SELECT toString(sum(delta)) AS s FROM ${p.store.database}.supply_deltas_daily WHERE chain_id = 101`,
  );
  return BigInt(s.s);
}

async function correctionRows(slot: number) {
  return p.store.query<{ block_number: string; from_address: string; to_address: string; amount: string }>(
    `SELECT toString(block_number) AS block_number, from_address, to_address, toString(amount) AS amount
     FROM ${p.store.database}.transfers WHERE chain_id = 101 AND tx_hash = {id:String} ORDER BY log_index`,
    { id: correctionId(MINT, `reread:${slot}`) },
  );
}

const startIngest = (bus: Bus = p.bus) =>
  startSolanaIngest({ config: p.config, bus, codec: p.codec, log: silentLogger, clock: () => now });

/** Waits until the running ingester follows the ledger head, `done` holds, and the pipeline stored it all. */
async function caughtUp(done: (pr: ReturnType<SolanaIngest['progress']>[number]) => boolean = () => true) {
  await vi.waitFor(
    () => {
      const [pr] = (ing as SolanaIngest).progress();
      expect(pr.phase, 'the follower to follow').toBe('following');
      expect(pr.slot, 'the ingester to reach the ledger head').toBeGreaterThanOrEqual(ledger.slot);
      expect(done(pr), `the follower to be done: ${JSON.stringify(pr)}`).toBe(true);
    },
    { timeout: 30_000 },
  );
  // The views count what the chain 101 watermark covers: it is published after the round's transfers.
  await vi.waitFor(
    async () => {
      await p.drained();
      const [w] = await p.store.query<{ b: string }>(
        `SELECT toString(block_number) AS b FROM ${p.store.database}.chain_watermarks WHERE chain_id = 101`,
      );
      expect(Number(w?.b), 'the chain 101 watermark').toBeGreaterThanOrEqual(ledger.slot);
    },
    { timeout: 30_000 },
  );
  // Published before that watermark, so on the bus by now: stored once the consumers drain.
  await p.drained();
}

const rereadNow = (pr: { rereadAt?: number }) => pr.rereadAt === now;

beforeAll(async () => {
  tx([[A, 1_000_000n]]);
  tx([[B, 500_000n]]);
  rpc = await startSolanaRpc(ledger);
  p = await startPipeline({
    config: {
      vaults: [solanaVault()],
      solana: {
        rpcUrls: [rpc.url],
        pollIntervalMs: 30,
        backoffMs: 5,
        subscribe: false,
        unsubscribedReconcileIntervalMs: INTERVAL,
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await ing?.stop();
  await p?.close();
  await rpc?.close();
});

describe('Solana holder reconciliation', () => {
  it('reads a Token-2022 mint at the opening; a plain transfer stays invisible to the follower', async () => {
    ing = startIngest();
    await caughtUp();
    expect(await balancesView()).toEqual(ledger.holders(MINT));
    tx(
      [
        [A, -300_000n],
        [D, 300_000n],
      ],
      true,
    );
    tx([
      [B, -100_000n],
      [C, 100_000n],
    ]);
    await caughtUp();
    const view = await balancesView();
    expect(view.get(A)).toBe(1_000_000n);
    expect(view.has(D)).toBe(false);
    expect(view.get(C)).toBe(100_000n);
    expect(view).not.toEqual(ledger.holders(MINT));
  }, 60_000);

  it('corrects the views to the chain at the read slot, counting a later transaction once', async () => {
    const supplyBefore = await viewSupply();
    let readSlot = 0;
    // Right after the full read, a visible transaction lands one slot later.
    ledger.afterAnswer = (method) => {
      if (method !== 'getProgramAccounts') return;
      readSlot = ledger.slot;
      ledger.afterAnswer = undefined;
      tx([
        [A, -50_000n],
        [F, 50_000n],
      ]);
    };
    now += INTERVAL;
    await caughtUp(rereadNow);
    expect(readSlot).toBeGreaterThan(0);
    expect(await balancesView()).toEqual(ledger.holders(MINT));
    expect(await viewHolders()).toBe(ledger.holders(MINT).size);
    expect(await viewSupply()).toBe(supplyBefore);
    expect(await viewSupply()).toBe(total(ledger.holders(MINT)));
    // Exactly the missed plain transfer, at the read slot; the later one is its own signature's.
    expect(await correctionRows(readSlot)).toEqual([
      { block_number: String(readSlot), from_address: A, to_address: D, amount: '300000' },
    ]);
    const [later] = await p.store.query<{ block_number: string; amount: string }>(
      `SELECT toString(block_number) AS block_number, toString(amount) AS amount FROM ${p.store.database}.transfers
       WHERE chain_id = 101 AND tx_hash = {sig:String}`,
      { sig: signature(`rtx-${n}`) },
    );
    expect(later).toEqual({ block_number: String(readSlot + 1), amount: '50000' });
  }, 60_000);

  it('republishes the same corrections after a crash between saving and publishing them', async () => {
    await ing?.stop();
    tx(
      [
        [D, -120_000n],
        [B, 120_000n],
      ],
      true,
    );
    tx(
      [
        [C, -30_000n],
        [E, 30_000n],
      ],
      true,
    );
    const supplyBefore = await viewSupply();
    // The process dies on its first publish of the corrections: nothing reaches the bus.
    let crashed = false;
    const dying: Bus = Object.assign(Object.create(p.bus), {
      publish: async () => {
        crashed = true;
        throw new Error('process killed');
      },
    });
    now += INTERVAL;
    ing = startIngest(dying);
    await vi.waitFor(() => expect(crashed, 'the crash').toBe(true), { timeout: 30_000 });
    await ing.stop();
    const saved = (await new Journal(p.config.dataDir, 'nest-alpha').load(MINT))?.unpublished ?? [];
    expect(saved.map((c) => [c.from, c.to, c.amount])).toEqual(
      [
        [C, E, '30000'],
        [D, B, '120000'],
      ].sort(([a], [b]) => (a < b ? -1 : 1)),
    );
    const readSlot = saved[0].blockNumber;
    // The restart publishes the saved corrections, then its own re-read finds no drift.
    ing = startIngest();
    await caughtUp(rereadNow);
    // Published once more by hand, as a crash right after publishing would: the consumers drop it.
    await publisher(p.bus, p.codec, p.config.topicPrefix)('transfers', saved);
    await p.drained();
    now += INTERVAL;
    await caughtUp(rereadNow);
    expect(await balancesView()).toEqual(ledger.holders(MINT));
    expect(await viewHolders()).toBe(ledger.holders(MINT).size);
    expect(await viewSupply()).toBe(supplyBefore);
    const rows = await correctionRows(readSlot);
    expect(rows.map((r) => [r.from_address, r.to_address, r.amount])).toEqual(
      saved.map((c) => [c.from, c.to, c.amount]),
    );
    const [later] = await p.store.query<{ n: string }>(
      `SELECT toString(count()) AS n FROM ${p.store.database}.transfers WHERE chain_id = 101 AND block_number > {s:UInt64}`,
      { s: readSlot },
    );
    expect(Number(later.n)).toBe(0);
  }, 60_000);
});
