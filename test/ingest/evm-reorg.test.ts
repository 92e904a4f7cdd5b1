/**
 * Reorgs deeper than `confirmations`, on a real anvil with the devnet's contracts and
 * the real pipeline (in-process bus, consumers, chDB views): a 6-block fork carrying a
 * share transfer is ingested, then replaced by a longer branch; every stored balance
 * must equal the chain's `balanceOf` and the `transfers` view the chain's Transfer
 * logs. A reorg deeper than the kept window stops the chain with a reason, and a
 * checkpoint of another chain (another genesis) is refused by name.
 */
import { join } from 'node:path';
import { createPublicClient, type Hex, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount, startAnvil } from '../../devnet/anvil.ts';
import type { DevnetAddresses } from '../../devnet/deploy.ts';
import { type EvmIngest, startEvmIngest } from '../../ingest/evm/index.ts';
import type { Pipeline } from '../support/standins/pipeline.ts';
import { anvilRpc, openBus, readFamily, sendTx } from './evm-support.ts';
import { depositIntoVault, startVaultChain } from './evm-vault-chain.ts';

const [alice, bob, carol, dave] = [1, 2, 3, 4].map((i) => anvilAccount(i));
const WINDOW = 16;
/** The chain's confirmations: blocks within this depth of the head are not ingested yet. */
const CONF = 2;
const lc = (a: string) => a.toLowerCase();

let node: AnvilNode;
let d: DevnetAddresses;
let pipe: Pipeline;
let ingest: EvmIngest;

const url = () => node.rpcUrl;
const pub = () => createPublicClient({ transport: http(url()) });
const head = async () => Number(await anvilRpc<string>(url(), 'eth_blockNumber'));
const mine = (n: number) => anvilRpc(url(), 'anvil_mine', [`0x${n.toString(16)}`]);
const share = () => d.vaults[0].share;
const transfer = (from: typeof alice, to: Hex, amount: bigint) =>
  sendTx(url(), from, share(), dv.boringVaultAbi as never, 'transfer', [to, amount]);
const caughtUp = async () => {
  const h = await head();
  await vi.waitFor(() => expect(ingest.progress()[0]?.next, `block ${h - CONF}`).toBe(h - CONF + 1), {
    timeout: 30_000,
    interval: 25,
  });
};

beforeAll(async () => {
  ({ node, d, pipe } = await startVaultChain({ confirmations: CONF, reorgWindow: WINDOW }));
  await depositIntoVault({ node, d, pipe }, alice, 1_000_000_000n, 100_000_000n);
  await transfer(alice, bob.address, 10_000_000n);
  await mine(CONF);
  ingest = startEvmIngest({ config: pipe.config, bus: pipe.bus, codec: pipe.codec, log: silentLogger });
  await caughtUp();
}, 120_000);

afterAll(async () => {
  await ingest?.stop();
  await pipe?.close();
  await node?.stop();
});

/** The stored views against the chain: balances vs balanceOf of every address ever touched, transfers vs logs. */
async function expectViewsMatchChain(): Promise<void> {
  await pipe.drained();
  const logs = await pub().getContractEvents({
    address: share(),
    abi: dv.boringVaultAbi,
    eventName: 'Transfer',
    fromBlock: 0n,
  });
  const stored = await pipe.store.query<Record<string, string | number>>(
    `SELECT tx_hash, log_index, from_address, to_address, toString(amount) AS amount, block_hash
     FROM ${pipe.config.store.database}.transfers WHERE vault = 'v0' ORDER BY block_number, log_index`,
  );
  expect(stored.map((r) => ({ ...r, log_index: Number(r.log_index) }))).toEqual(
    logs.map((l) => ({
      tx_hash: l.transactionHash,
      log_index: l.logIndex,
      from_address: lc(l.args.from as string),
      to_address: lc(l.args.to as string),
      amount: (l.args.amount as bigint).toString(),
      block_hash: l.blockHash,
    })),
  );
  const balances = await pipe.store.query<{ holder: string; balance: string }>(
    `SELECT holder, toString(balance_raw) AS balance FROM ${pipe.config.store.database}.balances
     WHERE vault = 'v0' AND chain_id = 31337`,
  );
  const storedOf = new Map(balances.map((b) => [lc(b.holder), b.balance]));
  const holders = [alice, bob, carol, dave].map((a) => lc(a.address));
  for (const h of holders) {
    const onChain = await pub().readContract({
      address: share(),
      abi: dv.boringVaultAbi,
      functionName: 'balanceOf',
      args: [h as Hex],
    });
    expect(storedOf.get(h) ?? '0', `balance of ${h}`).toBe((onChain as bigint).toString());
  }
  // No stored holder beyond those the chain credits (the zero address never holds shares).
  expect([...storedOf.keys()].every((h) => holders.includes(h))).toBe(true);
}

describe('EVM reorgs against the stored views', () => {
  it(`stores a block only once ${CONF} blocks follow it (confirmations)`, async () => {
    await expectViewsMatchChain();
    const db = pipe.config.store.database;
    const stored = async (block: number) => {
      await pipe.drained();
      const [r] = await pipe.store.query<{ n: string; b: string }>(
        `SELECT toString(count()) AS n, toString(max(block_number)) AS b FROM ${db}.transfers WHERE block_number = ${block}`,
      );
      const [w] = await pipe.store.query<{ b: string }>(
        `SELECT toString(block_number) AS b FROM ${db}.chain_watermarks WHERE chain_id = 31337`,
      );
      return { transfers: Number(r.n), watermark: Number(w.b) };
    };
    await transfer(bob, alice.address, 1n);
    const block = await head();
    for (let follow = 0; follow < CONF; follow++) {
      await caughtUp();
      expect(await stored(block), `${follow} blocks after it`).toEqual({
        transfers: 0,
        watermark: block - CONF + follow,
      });
      await mine(1);
    }
    await caughtUp();
    expect(await stored(block), `${CONF} blocks after it`).toEqual({ transfers: 1, watermark: block });
  }, 60_000);

  it('retracts a reorg deeper than confirmations exactly and reads the canonical branch', async () => {
    await expectViewsMatchChain();
    // The fork: a transfer to carol, then 5 more blocks (6 orphaned), all ingested (CONF more mined).
    const snap = await anvilRpc<string>(url(), 'evm_snapshot');
    await transfer(alice, carol.address, 3_000_000n);
    await mine(5 + CONF);
    await caughtUp();
    await pipe.drained();
    const [forked] = await pipe.store.query<{ b: string }>(
      `SELECT toString(balance_raw) AS b FROM ${pipe.config.store.database}.balances WHERE holder = '${lc(carol.address)}'`,
    );
    expect(forked?.b).toBe('3000000');
    // The canonical branch: another transfer, in the first orphaned block's place, and a longer chain.
    await anvilRpc(url(), 'evm_revert', [snap]);
    await transfer(alice, dave.address, 2_000_000n);
    await transfer(bob, dave.address, 1_000_000n);
    await mine(7);
    await caughtUp();
    await vi.waitFor(() => expect(ingest.progress()[0].reorgs, 'the reorg').toBe(1), {
      timeout: 10_000,
      interval: 25,
    });
    await expectViewsMatchChain();
    const p = ingest.progress()[0];
    expect(p.blocksRetracted).toBe(6);
    expect(p.phase).toBe('live');
  }, 90_000);

  it('puts the watermark back on the common ancestor when a reorg leaves nothing newer to read', async () => {
    const db = pipe.config.store.database;
    const watermark = async () => {
      await pipe.drained();
      const [w] = await pipe.store.query<{ b: string }>(
        `SELECT toString(block_number) AS b FROM ${db}.chain_watermarks WHERE chain_id = 31337`,
      );
      return Number(w.b);
    };
    const reorgs = ingest.progress()[0].reorgs;
    const snap = await anvilRpc<string>(url(), 'evm_snapshot');
    const ancestor = await head();
    await mine(6 + CONF);
    await caughtUp();
    expect(await watermark()).toBe(ancestor + 6);
    // A shorter branch: its head is below the orphaned blocks, nothing on it is deep enough to read.
    await anvilRpc(url(), 'evm_revert', [snap]);
    await mine(1);
    await vi.waitFor(() => expect(ingest.progress()[0].reorgs, 'the reorg').toBe(reorgs + 1), {
      timeout: 10_000,
      interval: 25,
    });
    expect(await watermark()).toBe(ancestor);
    await mine(CONF + 1);
    await caughtUp();
    expect(await watermark()).toBe(ancestor + 2);
  }, 60_000);

  it(`stops the chain on a reorg deeper than its window (${WINDOW} blocks), with the reason`, async () => {
    const snap = await anvilRpc<string>(url(), 'evm_snapshot');
    await transfer(bob, carol.address, 1_000_000n);
    await mine(WINDOW + 4);
    await caughtUp();
    await anvilRpc(url(), 'evm_revert', [snap]);
    await mine(WINDOW + 8);
    await vi.waitFor(() => expect(ingest.progress()[0].phase, 'the chain to stop').toBe('stopped'), {
      timeout: 15_000,
      interval: 25,
    });
    const p = ingest.progress()[0];
    expect(p.stoppedReason).toMatch(/reorganized deeper than the 16 blocks kept/);
    expect(p.stoppedReason).toMatch(/reorgWindow/);
    // Stopped for good: the follower publishes nothing more of the new branch.
    const next = p.next;
    await mine(3);
    await new Promise((r) => setTimeout(r, 500));
    expect(ingest.progress()[0].next).toBe(next);
    const errors = await readFamily(pipe.bus, pipe.config.topicPrefix, 'source_errors');
    expect(errors.some((e) => e.code === 'REORG_TOO_DEEP' && e.chainId === 31337)).toBe(true);
  }, 90_000);

  it('refuses a checkpoint written for another chain (another genesis), naming both hashes', async () => {
    const dir = join(pipe.config.dataDir, 'genesis');
    const other = await startAnvil({ chainId: 31337, timestamp: 1_700_000_000 });
    try {
      const config = (rpc: string) => ({
        ...pipe.config,
        dataDir: dir,
        chains: [{ ...pipe.config.chains[0], rpcUrls: [rpc] }],
      });
      const bus = await openBus(join(dir, 'bus'));
      const first = startEvmIngest({ config: config(url()), bus, codec: pipe.codec, log: silentLogger });
      await vi.waitFor(() => expect(first.progress()[0].phase, 'the first chain').toBe('live'), {
        timeout: 30_000,
        interval: 25,
      });
      await first.stop();
      const second = startEvmIngest({
        config: config(other.rpcUrl),
        bus,
        codec: pipe.codec,
        log: silentLogger,
      });
      await vi.waitFor(() => expect(second.progress()[0].phase, 'the chain to stop').toBe('stopped'), {
        timeout: 15_000,
        interval: 25,
      });
      await second.stop();
      const expected = (await pub().getBlock({ blockNumber: 0n })).hash;
      const actual = (
        await createPublicClient({ transport: http(other.rpcUrl) }).getBlock({ blockNumber: 0n })
      ).hash;
      expect(expected).not.toBe(actual);
      const reason = second.progress()[0].stoppedReason ?? '';
      expect(reason).toContain('chain devnet (31337)');
      expect(reason).toContain(`expected genesis hash ${expected}`);
      expect(reason).toContain(`serves genesis ${actual}`);
      expect(reason).toMatch(/delete .*evm-31337\.json/);
      await bus.close();
    } finally {
      await other.stop();
    }
  }, 60_000);
});
