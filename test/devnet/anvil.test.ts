/** startAnvil on real anvil binaries: free ports, chain ids, an explicit port, and stop(). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createPublicClient, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { anvilAccount, DEPLOYER_KEY, freePort, startAnvil } from '../../devnet/anvil.ts';

describe('startAnvil', () => {
  it('starts nodes on distinct free ports with their chain ids, and stop() shuts them down', async () => {
    const [a, b] = await Promise.all([
      startAnvil({ chainId: 98866 }),
      startAnvil({ chainId: 56, timestamp: 1_700_000_000 }),
    ]);
    try {
      expect(a.port).not.toBe(b.port);
      expect(a.rpcUrl).toBe(`http://127.0.0.1:${a.port}`);
      expect(await createPublicClient({ transport: http(a.rpcUrl) }).getChainId()).toBe(98866);
      const bc = createPublicClient({ transport: http(b.rpcUrl) });
      expect(await bc.getChainId()).toBe(56);
      expect((await bc.getBlock({ blockNumber: 0n })).timestamp).toBe(1_700_000_000n);
      expect(await bc.getBalance({ address: anvilAccount(9).address })).toBe(10_000n * 10n ** 18n);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
    await expect(
      createPublicClient({ transport: http(a.rpcUrl, { retryCount: 0 }) }).getChainId(),
    ).rejects.toThrow();
  });

  it('keeps the states anvil moves out of memory in a HOME of the node, gone once it stops', async () => {
    const node = await startAnvil({ chainId: 31337 });
    const states = join(node.home, '.foundry', 'anvil', 'tmp');
    try {
      // Enough blocks that anvil writes older states to disk.
      // Mining 2,000 blocks takes longer than viem's default 10 s on a loaded machine.
      await createPublicClient({ transport: http(node.rpcUrl, { timeout: 120_000 }) }).request({
        method: 'anvil_mine' as never,
        params: ['0x7d0'] as never,
      });
      expect(readdirSync(states).length).toBeGreaterThan(0);
    } finally {
      await node.stop();
    }
    expect(existsSync(node.home)).toBe(false);
  });

  it('uses an explicit port, and fails clearly when it is taken', async () => {
    const port = await freePort();
    const node = await startAnvil({ chainId: 1, port });
    try {
      expect(node.port).toBe(port);
      await expect(startAnvil({ chainId: 1, port })).rejects.toThrow(/anvil exited/);
    } finally {
      await node.stop();
    }
  });

  it('names the deployer key of anvil account 0', () => {
    expect(privateKeyToAccount(DEPLOYER_KEY).address).toBe(anvilAccount(0).address);
  });
});
