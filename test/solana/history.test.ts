/**
 * Solana in the daily holder history: the devnet's Solana side (LiteSVM running the real SPL
 * Token program) trades the share over several days before the ingester first starts; the
 * opening must publish the holders' past (from the mint's past transactions), so that
 * `holder_history_daily` on chain 101 has every one of those days, each equal to the
 * simulator's own count at the day's end, and not one step at the day of the first run.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../core/log.ts';
import { SolanaSim } from '../../devnet/solana/sim.ts';
import { type SolanaIngest, startSolanaIngest } from '../../ingest/solana/index.ts';
import { solanaVault } from '../fixtures/solana/vaults.ts';
import { type Pipeline, startPipeline } from '../support/standins/pipeline.ts';

const DAY = 86_400;
const GENESIS = Date.UTC(2025, 5, 1) / 1000;
const COMPOSER = '0x00000000000000000000000000000000000c0de5';
const RELAYER = '0x00000000000000000000000000000000000000aa';
let sim: SolanaSim;
let p: Pipeline;
let ing: SolanaIngest;

/** A delivered mint flow at `at`: `shares` minted to a wallet on Solana. */
async function mintFlow(at: number, shares: bigint, n: number) {
  const burn = await sim.burn(at, 1_000_000n, COMPOSER, RELAYER);
  await sim.settle(burn, {
    nonce: `0x${n.toString(16).padStart(64, '0')}`,
    relayTx: `0x${n.toString(16).padStart(64, '0')}`,
    at: at + 60,
    refunded: false,
    guid: `0x${(n + 1000).toString(16).padStart(64, '0')}`,
    shares,
  });
}

beforeAll(async () => {
  // The chain's clock stands ten days after genesis: the follower's first run comes after the history.
  sim = await SolanaSim.start(11, GENESIS, () => (GENESIS + 10 * DAY) * 1000);
  await mintFlow(GENESIS + 3_600, 900_000_000n, 1);
  await mintFlow(GENESIS + 7_200, 400_000_000n, 2);
  for (let d = 1; d <= 5; d++) {
    for (let k = 0; k < 3; k++) await sim.transfer(GENESIS + d * DAY + 1_000 + k * 600);
    if (d === 3) await mintFlow(GENESIS + d * DAY + 5_000, 250_000_000n, 3);
  }
  p = await startPipeline({
    config: {
      vaults: [{ ...solanaVault(), solana: { ...solanaVault().solana, mintAddress: sim.mint } }],
      solana: {
        rpcUrls: [sim.rpcUrl],
        commitment: 'confirmed',
        pollIntervalMs: 50,
        backoffMs: 5,
        subscribe: false,
      },
    },
  });
  ing = startSolanaIngest({ config: p.config, bus: p.bus, codec: p.codec, log: silentLogger });
}, 60_000);

afterAll(async () => {
  await ing?.stop();
  await p?.close();
  await sim?.stop();
});

describe('Solana in the daily holder history', () => {
  it('has every past day of chain 101, each equal to the simulator’s count at the day’s end', async () => {
    const truth = sim.toJSON().holdersByDay;
    const days = Object.keys(truth).sort();
    expect(days.length).toBeGreaterThanOrEqual(6);
    await vi.waitFor(() => expect(ing.progress()[0].phase).toBe('following'), { timeout: 30_000 });
    await vi.waitFor(
      async () => {
        await p.drained();
        const rows = await p.store.query<{ d: string; end: string }>(
          `SELECT toString(day) AS d, toString(end) AS end FROM ${p.store.database}.holder_history_daily
           WHERE vault = 'nest-alpha' AND chain_id = 101 AND day <= {last:Date} ORDER BY day`,
          { last: days[days.length - 1] },
        );
        expect(Object.fromEntries(rows.map((r) => [r.d, Number(r.end)]))).toEqual(truth);
      },
      { timeout: 30_000 },
    );
  }, 90_000);
});
