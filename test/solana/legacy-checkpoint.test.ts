/**
 * A follower's checkpoint from before the journal (cursor and per-owner ledger in one JSON file)
 * is taken over without a wrong number: the views hold what the old follower published (its
 * opening and a transaction), the chain then moves on (a visible transaction and a plain SPL
 * Transfer the old follower would never have seen), and the new follower must bring chain 101's
 * balances to the chain's, count nothing twice, and go on following from the journal.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { openingTransfer } from '../../ingest/solana/balances.ts';
import { startSolanaIngest } from '../../ingest/solana/index.ts';
import { Journal } from '../../ingest/solana/journal.ts';
import { publisher } from '../../ingest/solana/publish.ts';
import type { TransferRecord } from '../../schemas/records.ts';
import { address, signature } from '../fixtures/solana/keys.ts';
import { MINT, solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';
import type { Standin } from '../support/standins/server.ts';
import { SolanaLedger, startSolanaRpc } from '../support/standins/solana-rpc.ts';

const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((l) => address(`legacy-${l}`));
const ledger = new SolanaLedger();
let rpc: Standin;
let p: Pipeline;
let n = 0;
const tx = (changes: [string, bigint][], plainTransfer = false) =>
  ledger.transact(
    signature(`legacy-${++n}`),
    MINT,
    changes.map(([owner, delta]) => ({ owner, delta })),
    { plainTransfer },
  );

async function balancesView(): Promise<Map<string, bigint>> {
  const rows = await p.store.query<{ holder: string; balance_raw: string }>(
    `SELECT holder, toString(balance_raw) AS balance_raw FROM ${p.store.database}.balances
     WHERE vault = 'nest-alpha' AND chain_id = 101`,
  );
  return new Map(rows.map((r) => [r.holder, BigInt(r.balance_raw)]));
}

beforeAll(async () => {
  rpc = await startSolanaRpc(ledger);
  p = await startPipeline({
    config: {
      vaults: [solanaVault()],
      solana: { rpcUrls: [rpc.url], pollIntervalMs: 30, backoffMs: 5, subscribe: false },
    },
  });
}, 60_000);

afterAll(async () => {
  await p?.close();
  await rpc?.close();
});

describe('a checkpoint from before the journal', () => {
  it('is taken over: the views reach the chain, nothing is counted twice, the journal goes on', async () => {
    tx([[A, 1_000_000n]]);
    tx([[B, 400_000n]]);
    const openingSlot = ledger.slot;
    // What the old follower published: its opening (a mint per account, at its slot), then one transaction.
    const opening: TransferRecord[] = [
      openingTransfer(
        { pubkey: address(`ata:${A}:${MINT}`), owner: A, amount: 1_000_000n },
        { mint: MINT, vault: 'nest-alpha', slot: openingSlot, time: ledger.timeOf(openingSlot) },
      ),
      openingTransfer(
        { pubkey: address(`ata:${B}:${MINT}`), owner: B, amount: 400_000n },
        { mint: MINT, vault: 'nest-alpha', slot: openingSlot, time: ledger.timeOf(openingSlot) },
      ),
    ];
    const t3 = tx([
      [A, -100_000n],
      [C, 100_000n],
    ]);
    const moved: TransferRecord = {
      ...opening[0],
      blockNumber: t3.slot,
      blockHash: t3.signature,
      txHash: t3.signature,
      blockTimestamp: t3.blockTime,
      from: A,
      to: C,
      amount: '100000',
    };
    const publish = publisher(p.bus, p.codec, p.config.topicPrefix);
    await publish('transfers', [...opening, moved]);
    mkdirSync(join(p.config.dataDir, 'ingest'), { recursive: true });
    writeFileSync(
      join(p.config.dataDir, 'ingest', 'solana-nest-alpha.json'),
      JSON.stringify({
        mint: MINT,
        phase: 'following',
        slot: t3.slot,
        signature: t3.signature,
        ledger: { [A]: '900000', [B]: '400000', [C]: '100000' },
        reconciledAt: 0,
      }),
    );
    // The chain moves on while the old follower is gone.
    tx([
      [B, -50_000n],
      [D, 50_000n],
    ]);
    tx(
      [
        [C, -100_000n],
        [A, 100_000n],
      ],
      true,
    );
    const ing = startSolanaIngest({ config: p.config, bus: p.bus, codec: p.codec, log: silentLogger });
    await vi.waitFor(
      async () => {
        await p.drained();
        expect(await balancesView()).toEqual(ledger.holders(MINT));
      },
      { timeout: 30_000 },
    );
    tx([
      [A, -1n],
      [B, 1n],
    ]);
    await vi.waitFor(
      async () => {
        await p.drained();
        expect(await balancesView()).toEqual(ledger.holders(MINT));
      },
      { timeout: 30_000 },
    );
    await ing.stop();
    expect((await new Journal(p.config.dataDir, 'nest-alpha').load(MINT))?.meta.phase).toBe('following');
    const [supply] = await p.store.query<{ s: string }>(
      `SELECT toString(sum(delta)) AS s FROM ${p.store.database}.supply_deltas_daily WHERE chain_id = 101`,
    );
    expect(BigInt(supply.s)).toBe([...ledger.holders(MINT).values()].reduce((a, b) => a + b, 0n));
  }, 60_000);
});
