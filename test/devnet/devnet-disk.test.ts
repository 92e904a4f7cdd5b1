/**
 * The devnet runs for days without filling the disk. Its anvil nodes keep a
 * bounded number of block states, in memory only (devnet/run.ts `keptStates`): after mining
 * far more blocks than that, with live ticks in between, no node's HOME holds any state
 * (anvil used to write every state it moved out of memory there, ~270 KB a block), the
 * recent states still answer calls, and the oldest are gone (the bound holds).
 */
import { execFileSync } from 'node:child_process';
import { createPublicClient, http, type PublicClient } from 'viem';
import { describe, expect, it } from 'vitest';
import { anvilAccount } from '../../devnet/anvil.ts';
import { keptStates } from '../../devnet/run.ts';
import { tickedDevnet } from '../support/ticked-devnet.ts';

const suite = tickedDevnet('vs-devnet-disk-', { chainIds: [98866, 1] });
const { settings } = suite;

const kib = (path: string) => Number(execFileSync('du', ['-sk', path], { encoding: 'utf8' }).split('\t')[0]);

describe('devnet disk use', () => {
  it('keeps its nodes’ states within the bound, none on disk, after many blocks and live ticks', async () => {
    const keep = keptStates(settings);
    const clients = suite.devnet.chains.map(
      (c) => createPublicClient({ transport: http(c.rpcUrls?.[0], { timeout: 300_000 }) }) as PublicClient,
    );
    // Twice the bound in blocks, live ticks (real transactions, new states) in between.
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        clients.map((c) =>
          c.request({
            method: 'anvil_mine' as never,
            params: [`0x${Math.ceil(keep / 2).toString(16)}`] as never,
          }),
        ),
      );
      for (let t = 0; t < 3; t++) await suite.devnet.simulator.tick();
    }
    for (const [i, c] of clients.entries()) {
      const head = await c.getBlockNumber();
      expect(head, 'blocks mined').toBeGreaterThan(BigInt(2 * keep));
      // Nothing of the node's states on disk: its HOME holds at most anvil's few small files.
      expect(
        kib(suite.devnet.anvilHomes[i]),
        `anvil home of chain ${suite.devnet.chains[i].chainId} (KiB)`,
      ).toBeLessThan(256);
      // A read at a block needs that block's state.
      const at = (n: bigint) => c.getBalance({ address: anvilAccount(5).address, blockNumber: n });
      expect(await at(head - 100n), 'a recent state answers').toBeGreaterThan(0n);
      await expect(at(head - BigInt(keep) - 50n), 'a state past the bound is gone').rejects.toThrow();
    }
  }, 600_000);
});
