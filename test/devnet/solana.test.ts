/**
 * The devnet's Solana side (LiteSVM running the real SPL Token programs, behind its
 * JSON-RPC) read by the project's own Solana ingester pieces: the full account read,
 * the mint's signatures and transactions turned into transfers, and the mint-flow
 * tracker's burn parser; and the Iris / scan stand-ins the simulator feeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { CCTP_PROGRAM, SolanaSim } from '../../devnet/solana/sim.ts';
import { parseBurn } from '../../ingest/mintflow/burn.ts';
import { irisSource, layerZeroScanSource } from '../../ingest/mintflow/http-sources.ts';
import {
  mintProgram,
  type ReadAccount,
  readMintAccounts,
  TOKEN_PROGRAM,
} from '../../ingest/solana/accounts.ts';
import { mintTx, ownerDeltas } from '../../ingest/solana/balances.ts';
import { createRpc, type SolanaRpc } from '../../ingest/solana/rpc.ts';
import { signaturesSince } from '../../ingest/solana/signatures.ts';
import type { ParsedTransaction } from '../../ingest/solana/types.ts';

const COMPOSER = '0x00000000000000000000000000000000000c0de5';
const RELAYER = '0x00000000000000000000000000000000000000aa';
const GUID = `0x${'ab'.repeat(32)}` as const;
let sim: SolanaSim;

/** Each owner's total over the accounts of a full read (owners at zero left out), as decimal strings. */
async function ownerTotals(rpc: SolanaRpc): Promise<Record<string, string>> {
  const accounts: ReadAccount[] = [];
  await readMintAccounts(rpc, sim.mint, TOKEN_PROGRAM, { commitment: 'confirmed' }, (a) => accounts.push(a));
  const out = new Map<string, bigint>();
  for (const a of accounts) out.set(a.owner, (out.get(a.owner) ?? 0n) + a.amount);
  return Object.fromEntries([...out].filter(([, v]) => v > 0n).map(([o, v]) => [o, v.toString()]));
}

beforeAll(async () => {
  sim = await SolanaSim.start(7, 1_760_000_000, () => 1_760_100_000_000);
}, 30_000);
afterAll(() => sim?.stop());

describe('devnet Solana side', () => {
  it('serves the share mint, its holders and transfers to the ingester as the truth books them', async () => {
    const rpc = createRpc({ urls: [sim.rpcUrl], timeoutMs: 5_000, maxAttempts: 1, backoffMs: 0 });
    expect(await ownerTotals(rpc)).toEqual({});

    // Two flows (one refunded), then transfers between the holders.
    const b1 = await sim.burn(1_760_000_100, 900_000_000n, COMPOSER, RELAYER);
    await sim.settle(b1, {
      nonce: `0x${'01'.padStart(64, '0')}`,
      relayTx: `0x${'11'.repeat(32)}`,
      at: 1_760_000_110,
      refunded: false,
      guid: GUID,
      shares: 850_000_000n,
    });
    const b2 = await sim.burn(1_760_000_200, 5_000_000n, COMPOSER, RELAYER);
    await sim.settle(b2, {
      nonce: `0x${'02'.padStart(64, '0')}`,
      relayTx: `0x${'22'.repeat(32)}`,
      at: 1_760_000_210,
      refunded: true,
    });
    for (let t = 0; t < 4; t++) await sim.transfer(1_760_000_300 + t);
    const truth = sim.toJSON();
    expect(truth.transfers).toBe(4);
    expect(Object.values(truth.balances).reduce((s, x) => s + BigInt(x), 0n)).toBe(850_000_000n);

    expect(await mintProgram(rpc, sim.mint, 'confirmed')).toBe(TOKEN_PROGRAM);
    expect(await ownerTotals(rpc)).toEqual(truth.balances);

    // The mint's transactions, oldest first, rebuild the same ledger.
    const sigs = (await signaturesSince(rpc, sim.mint, { commitment: 'confirmed', limit: 2 })).reverse();
    expect(sigs).toHaveLength(6); // InitializeMint2, one MintToChecked, four TransferChecked
    const ledger = new Map<string, bigint>();
    for (const s of sigs) {
      const tx = await rpc.call<ParsedTransaction>('getTransaction', [
        s.signature,
        { encoding: 'jsonParsed' },
      ]);
      expect(tx.slot).toBe(s.slot);
      for (const [o, d] of ownerDeltas(mintTx(tx, sim.mint, 0))) ledger.set(o, (ledger.get(o) ?? 0n) + d);
    }
    expect(
      Object.fromEntries([...ledger].filter(([, v]) => v > 0n).map(([o, v]) => [o, v.toString()])),
    ).toEqual(truth.balances);
    const head = await rpc.call<number>('getSlot', []);
    expect(await rpc.call<number>('getBlockTime', [head])).toBe(1_760_100_000);
  });

  it('presents each burn as a CCTP deposit_for_burn_with_hook the tracker recognises', async () => {
    const rpc = createRpc({ urls: [sim.rpcUrl], timeoutMs: 5_000, maxAttempts: 1, backoffMs: 0 });
    const config = parseConfig({
      vaults: [
        {
          slug: 'v0',
          name: 'V0',
          symbol: 'V0',
          vaultType: 'boringNest',
          vaultAddress: '0x0000000000000000000000000000000000000001',
          accountantAddress: '0x0000000000000000000000000000000000000002',
          chainIds: [98866],
          decimals: 6,
          chain: {},
          solana: {
            mintAddress: sim.mint,
            oftStoreAddress: sim.oftStore,
            composerAddress: COMPOSER,
            decimals: 6,
            startBlock: 0,
          },
        },
      ],
    });
    const burns = await signaturesSince(rpc, CCTP_PROGRAM, { commitment: 'confirmed', limit: 1000 });
    const flows = sim.toJSON().mintFlows;
    expect(burns.map((s) => s.signature).reverse()).toEqual(flows.map((f) => f.signature));
    for (const f of flows) {
      const tx = await rpc.call<ParsedTransaction>('getTransaction', [
        f.signature,
        { encoding: 'jsonParsed' },
      ]);
      expect(parseBurn(tx, config)).toMatchObject({
        vault: 'v0',
        wallet: f.wallet,
        amount: f.amount,
        composer: COMPOSER,
        destinationDomain: 22,
      });
      // The USDC really left the wallet (the executed SPL Burn).
      const pre = tx.meta?.preTokenBalances?.[0]?.uiTokenAmount.amount;
      const post = tx.meta?.postTokenBalances?.[0]?.uiTokenAmount.amount;
      expect(BigInt(pre ?? 0) - BigInt(post ?? 0)).toBe(BigInt(f.amount));
      const a = await irisSource(sim.services.irisUrl, 5_000).byTransaction(5, f.signature);
      expect(a).toMatchObject({ status: 'complete', nonce: f.nonce });
    }
    const delivered = flows.find((f) => !f.refunded);
    const m = await layerZeroScanSource(sim.services.scanUrl, 5_000).byGuid(delivered?.guid ?? '');
    expect(m).toMatchObject({ status: 'DELIVERED', dstTxHash: delivered?.mintSignature });
    expect(flows.find((f) => f.refunded)?.steps).toMatchObject({ relay: 'failed', reclaim: 'completed' });
  });
});
