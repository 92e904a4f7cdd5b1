import { join } from 'node:path';
import { type Abi, createPublicClient, type Hex, http, maxUint256, parseEventLogs } from 'viem';
import type { Account } from 'viem/accounts';
import { describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { anvilAccount } from '../../devnet/anvil.ts';
import { deployVaultSystem } from '../../devnet/deploy.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  liveEvents,
  localChain,
  openBus,
  readFamily,
  sendTx,
  usdcVault,
  useAnvilNode,
} from './evm-support.ts';

const deployer = anvilAccount(0);
const alice = anvilAccount(1);
const lc = (a: string) => a.toLowerCase();
const chain = useAnvilNode('vs-evm-oft-fees-');
const { root } = chain;

describe('EVM deposit fees and OFT adapter on the devnet', () => {
  it('publishes each NestVault deposit fee exactly and the adapter bridges as activity', async () => {
    const pub = createPublicClient({ transport: http(chain.node.rpcUrl) });
    const send = (who: Account, address: Hex, abi: Abi, functionName: string, args: unknown[]) =>
      sendTx(chain.node.rpcUrl, who, address, abi, functionName, args);
    const d = await deployVaultSystem(chain.node.rpcUrl, { vaults: 1 });
    const [v] = d.vaults;
    const claimable = () =>
      pub.readContract({
        address: v.nestVault,
        abi: dv.nestVaultAbi,
        functionName: 'claimableFees',
        args: [1],
      });
    await send(deployer, d.asset, dv.mockUsdcAbi, 'mint', [alice.address, 10_000_000_000n]);
    await send(alice, d.asset, dv.mockUsdcAbi, 'approve', [v.nestVault, maxUint256]);
    // Set before the start block: only a read of `fees(1)` can know it.
    await send(deployer, v.nestVault, dv.nestVaultAbi, 'setFee', [1, { rate: 2_500, flat: 1_000n }]);
    const startBlock = Number(await pub.getBlockNumber()) + 1;
    const charged: bigint[] = [];
    for (const [assets, fee] of [
      [4_790_059_601n, undefined],
      [123_456_789n, { rate: 12_345, flat: 7n }],
      [999_999n, undefined],
    ] as const) {
      if (fee) await send(deployer, v.nestVault, dv.nestVaultAbi, 'setFee', [1, fee]);
      const before = await claimable();
      await send(alice, v.nestVault, dv.nestVaultAbi, 'deposit', [assets, alice.address]);
      charged.push((await claimable()) - before);
    }
    const sent = await send(alice, v.share, dv.boringVaultAbi, 'approve', [d.oft, maxUint256]).then(() =>
      send(alice, d.oft, dv.shareOftAbi, 'send', [
        30101,
        `0x${lc(alice.address).slice(2).padStart(64, '0')}`,
        5_000_001n,
      ]),
    );
    const guid = parseEventLogs({ abi: dv.shareOftAbi, logs: sent.logs, eventName: 'OFTSent' })[0].args.guid;
    await send(deployer, d.oft, dv.shareOftAbi, 'lzReceive', [guid, 30101, alice.address, 2_000_002n]);

    const config = parseConfig({
      dataDir: root,
      chains: [localChain({ name: 'devnet', rpcUrls: [chain.node.rpcUrl], confirmations: 0, startBlock })],
      vaults: [
        {
          ...usdcVault({ slug: 'v0', name: 'v0', ...v, teller: v.tellerVeda, usdc: d.asset }),
          coreShareOftAddress: d.oft,
        },
      ],
    });
    const bus = await openBus(join(root, 'bus'));
    const head = Number(await pub.getBlockNumber());
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    // The node mines on an interval as well: past the head read, not exactly at it.
    await vi.waitFor(() => expect(ingest.progress()[0]?.next, 'the ingester').toBeGreaterThan(head), {
      timeout: 30_000,
      interval: 25,
    });
    await ingest.stop();
    const read = async (f: Parameters<typeof readFamily>[2]) =>
      liveEvents(await readFamily(bus, config.topicPrefix, f), (r) => `${r.blockHash}:${r.logIndex}`).sort(
        (a, b) => (a.blockNumber as number) - (b.blockNumber as number),
      );

    expect(charged.every((c) => c > 0n)).toBe(true);
    const fees = (await read('fees')).filter((r) => r.kind === 'DEPOSIT');
    expect(fees.map((r) => [r.token, r.amount, r.decimals])).toEqual(
      charged.map((c) => [lc(d.asset), c.toString(), 6]),
    );

    const oftLogs = await pub.getContractEvents({
      address: d.oft,
      abi: dv.shareOftAbi,
      fromBlock: BigInt(startBlock),
    });
    expect(oftLogs).toHaveLength(2);
    const bridges = (await read('activity')).filter((r) => String(r.kind).startsWith('BRIDGE'));
    expect(bridges.map((r) => [r.kind, r.user, r.shares, r.txHash])).toEqual(
      oftLogs.map((l) => {
        const a = l.args as Record<string, unknown>;
        return l.eventName === 'OFTSent'
          ? ['BRIDGE_OUT', lc(a.fromAddress as string), String(a.amountSentLD), l.transactionHash]
          : ['BRIDGE_IN', lc(a.toAddress as string), String(a.amountReceivedLD), l.transactionHash];
      }),
    );
  }, 120_000);
});
