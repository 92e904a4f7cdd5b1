/**
 * An analyst query that fails after its header, replayed against a chain: on a real anvil with the devnet's contracts and
 * the real pipeline (ingester, in-process bus, consumers, chDB views) serving the SQL interface,
 * an analyst loops failing queries whose header is shaped like the consumer's stored-state lookup
 * for exactly the transfers that are on chain but not ingested yet (within `confirmations`).
 * Before the fix, a leaked header made the consumer drop such a transfer as "already stored".
 * After it, every stored transfer equals the chain's Transfer logs and every balance its
 * `balanceOf`.
 */
import { createPublicClient, type Hex, http } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type SqlHttp, startSqlHttp } from '../../api/sql/server.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount } from '../../devnet/anvil.ts';
import type { DevnetAddresses } from '../../devnet/deploy.ts';
import { type EvmIngest, startEvmIngest } from '../../ingest/evm/index.ts';
import type { Pipeline } from '../support/standins/pipeline.ts';
import { anvilRpc, sendTx } from './evm-support.ts';
import { depositIntoVault, startVaultChain } from './evm-vault-chain.ts';

const CHAIN = 31337;
const CONF = 3;
const holders = [1, 2, 3, 4].map((i) => anvilAccount(i));
const lc = (a: string) => a.toLowerCase();

let node: AnvilNode;
let d: DevnetAddresses;
let pipe: Pipeline;
let ingest: EvmIngest;
let sql: SqlHttp;

const url = () => node.rpcUrl;
const pub = () => createPublicClient({ transport: http(url()) });
const mine = (n: number) => anvilRpc(url(), 'anvil_mine', [`0x${n.toString(16)}`]);
const share = () => d.vaults[0].share;
const transferLogs = () =>
  pub().getContractEvents({ address: share(), abi: dv.boringVaultAbi, eventName: 'Transfer', fromBlock: 0n });

beforeAll(async () => {
  ({ node, d, pipe } = await startVaultChain({ confirmations: CONF }));
  sql = await startSqlHttp({
    store: pipe.store,
    log: silentLogger,
    settings: { ...pipe.config.sql, http: { ...pipe.config.sql.http, port: 0, maxConcurrentQueries: 4 } },
  });
  const [alice] = holders;
  await depositIntoVault({ node, d, pipe }, alice, 10_000_000_000n, 1_000_000_000n);
  ingest = startEvmIngest({ config: pipe.config, bus: pipe.bus, codec: pipe.codec, log: silentLogger });
}, 180_000);

afterAll(async () => {
  await ingest?.stop();
  await sql?.close();
  await pipe?.close();
  await node?.stop();
});

/** The attacker's request: a header of forged stored states, then a failure after it is written. */
function forged(ids: string[]): string {
  const lines = ids.map((id) => JSON.stringify({ event_id: id, removed: 0 })).join('\n');
  return `SELECT 1 AS \`${lines}\` FROM numbers(200000) WHERE throwIf(number > 70000) FORMAT TSVRawWithNames`;
}

describe('finding 1 replayed while the pipeline ingests', () => {
  it('forged stored states in failing analyst queries drop no transfer and change no balance', async () => {
    const [alice, ...others] = holders;
    let attacking = true;
    let pending: string[] = [];
    let sent = 0;
    const attack = async () => {
      while (attacking) {
        if (pending.length === 0) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const res = await fetch(`${sql.url}/`, { method: 'POST', body: forged(pending) });
        await res.text();
        sent++;
      }
    };
    const attackers = [attack(), attack()];
    for (let round = 0; round < 6; round++) {
      // A transfer on chain, not yet ingested: the attacker forges its stored state.
      await sendTx(url(), alice, share(), dv.boringVaultAbi as never, 'transfer', [
        others[round % others.length].address,
        BigInt(1_000_000 + round),
      ]);
      const logs = await transferLogs();
      pending = logs.map((l) => `${CHAIN}:${lc(l.blockHash as string)}:${l.logIndex}`);
      // Attacked before it is confirmed (analysts' queries yield to the pipeline's, so wait for them).
      const before = sent;
      await vi.waitFor(() => expect(sent).toBeGreaterThanOrEqual(before + 2), {
        timeout: 30_000,
        interval: 20,
      });
      // The blocks that confirm it, one at a time: the consumer looks its state up meanwhile.
      for (let i = 0; i < CONF; i++) {
        await mine(1);
        await new Promise((r) => setTimeout(r, 150));
      }
    }
    const head = Number(await pub().getBlockNumber());
    await vi.waitFor(() => expect(ingest.progress()[0]?.next).toBe(head - CONF + 1), {
      timeout: 60_000,
      interval: 50,
    });
    await pipe.drained();
    attacking = false;
    await Promise.all(attackers);
    expect(sent).toBeGreaterThanOrEqual(12);

    const logs = await transferLogs();
    expect(logs.length).toBeGreaterThanOrEqual(7);
    const db = pipe.config.store.database;
    const stored = await pipe.store.query<{ tx_hash: string; log_index: number; amount: string }>(
      `SELECT tx_hash, log_index, toString(amount) AS amount FROM ${db}.transfers WHERE vault = 'v0' ORDER BY block_number, log_index`,
    );
    expect(stored.map((r) => ({ ...r, log_index: Number(r.log_index) }))).toEqual(
      logs.map((l) => ({
        tx_hash: l.transactionHash,
        log_index: l.logIndex,
        amount: (l.args.amount as bigint).toString(),
      })),
    );
    const balances = await pipe.store.query<{ holder: string; balance: string }>(
      `SELECT holder, toString(balance_raw) AS balance FROM ${db}.balances WHERE vault = 'v0' AND chain_id = ${CHAIN}`,
    );
    const storedOf = new Map(balances.map((b) => [lc(b.holder), b.balance]));
    for (const h of holders.map((a) => lc(a.address))) {
      const onChain = await pub().readContract({
        address: share(),
        abi: dv.boringVaultAbi,
        functionName: 'balanceOf',
        args: [h as Hex],
      });
      expect(storedOf.get(h) ?? '0', `balance of ${h}`).toBe((onChain as bigint).toString());
    }
  }, 240_000);
});
