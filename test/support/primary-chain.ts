/**
 * The primary chain of the mint-flow tests: a real anvil with the project's devnet
 * contracts (devnet/deploy.ts: the CCTP relayer, the vault composer and the share
 * OFT of vault 0, over a real NestVault), driven the way the relayer bot drives it.
 */
import { createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { relayerAbi } from '../../devnet/abis.ts';
import { DEPLOYER_KEY, startAnvil } from '../../devnet/anvil.ts';
import { type DevnetAddresses, deployVaultSystem } from '../../devnet/deploy.ts';

export interface PrimaryChain {
  rpcUrl: string;
  addresses: DevnetAddresses;
  client: PublicClient;
  /**
   * `relay` of the CCTP relayer for `nonce`: mints `amount` USDC, then deposits it
   * through the composer and sends the shares to `recipient` on `dstEid`, or with
   * `forceRefund` reports HookFailed and refunds. Returns the transaction hash.
   */
  relay(nonce: Hex, amount: bigint, dstEid: number, recipient: Hex, forceRefund: boolean): Promise<Hex>;
  stop(): Promise<void>;
}

/** Starts anvil for `chainId` and deploys the devnet's vault system (one vault) on it. */
export async function startPrimaryChain(chainId: number): Promise<PrimaryChain> {
  const node = await startAnvil({ chainId });
  try {
    const addresses = await deployVaultSystem(node.rpcUrl, { vaults: 1 });
    const transport = http(node.rpcUrl);
    const client = createPublicClient({ transport, pollingInterval: 50 }) as PublicClient;
    const wallet = createWalletClient({ transport, account: privateKeyToAccount(DEPLOYER_KEY) });
    return {
      rpcUrl: node.rpcUrl,
      addresses,
      client,
      async relay(nonce, amount, dstEid, recipient, forceRefund) {
        const hash = await wallet.writeContract({
          address: addresses.relayer,
          abi: relayerAbi,
          functionName: 'relay',
          args: [nonce, amount, dstEid, recipient, forceRefund],
          chain: null,
        });
        const r = await client.waitForTransactionReceipt({ hash });
        if (r.status !== 'success') throw new Error(`relay ${nonce} reverted`);
        return hash;
      },
      stop: () => node.stop(),
    };
  } catch (e) {
    await node.stop();
    throw e;
  }
}
