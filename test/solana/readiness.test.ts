/**
 * `/readyz` and the Solana followers: while a follower's opening read is not all published the
 * report is not ready with the reason "solana: opening read not finished" (the first full read
 * here stalls, then times out and is read again); once it is, that reason is gone. Through the
 * real Readiness (api/readiness.ts) over the pipeline's store and the synthetic mint's RPC.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Readiness } from '../../api/readiness.ts';
import { silentLogger } from '../../core/log.ts';
import { SyntheticMint } from '../../devnet/solana/synthetic.ts';
import { type SyntheticRpc, startSyntheticRpc } from '../../devnet/solana/synthetic-rpc.ts';
import { type SolanaIngest, startSolanaIngest } from '../../ingest/solana/index.ts';
import { solanaReadiness } from '../../ingest/solana/readiness.ts';
import { solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';

const mint = new SyntheticMint({ accounts: 300, history: 20, seed: 38 });
let rpc: SyntheticRpc;
let p: Pipeline;
let ing: SolanaIngest;

beforeAll(async () => {
  rpc = await startSyntheticRpc(mint);
  rpc.faults.stallReads = 1;
  p = await startPipeline({
    config: {
      vaults: [{ ...solanaVault(), solana: { ...solanaVault().solana, mintAddress: mint.mint } }],
      solana: { rpcUrls: [rpc.url], pollIntervalMs: 50, backoffMs: 5, requestTimeoutMs: 1500 },
    },
  });
}, 60_000);

afterAll(async () => {
  await ing?.stop();
  await p?.close();
  await rpc?.close();
});

describe('readiness with a Solana follower', () => {
  it('is not ready until the opening read is published, then the Solana reason is gone', async () => {
    ing = startSolanaIngest({ config: p.config, bus: p.bus, codec: p.codec, log: silentLogger });
    const readiness = new Readiness({
      store: p.store,
      maxLagSeconds: 60,
      chainIds: () => [],
      conditions: [solanaReadiness(ing)],
      minIntervalMs: 0,
    });
    const during = await readiness.check();
    expect(during.status).toBe('not_ready');
    expect(during.reasons).toContain('solana: opening read not finished');
    await vi.waitFor(() => expect(ing.progress()[0].phase).toBe('following'), { timeout: 30_000 });
    const after = await readiness.check();
    expect(after.reasons.filter((r) => r.startsWith('solana:'))).toEqual([]);
    expect(rpc.stats.calls.getProgramAccounts).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
