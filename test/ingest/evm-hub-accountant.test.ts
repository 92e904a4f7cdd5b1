import { join } from 'node:path';
import { type Abi, createPublicClient, http } from 'viem';
import { describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { anvilAccount } from '../../devnet/anvil.ts';
import { defaultVaultSpec, deployVaultSystem } from '../../devnet/deploy.ts';
import { accountantStateCall, decodeAccountantState } from '../../ingest/evm/accountant.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import {
  anvilRpc,
  liveEvents,
  localChain,
  openBus,
  readFamily,
  sendTx,
  usdcVault,
  useAnvilNode,
} from './evm-support.ts';

const deployer = anvilAccount(0);
const lc = (a: string) => a.toLowerCase();
const ONE = 1_000_000n;
const YEAR = 365n * 86_400n;
const chain = useAnvilNode('vs-evm-hub-');
const { root } = chain;

describe('Nest hub accountant on anvil', () => {
  it('decodes getAccountantState and publishes the net rates and the accrued fees of each update', async () => {
    const pub = createPublicClient({ transport: http(chain.node.rpcUrl) });
    const spec = defaultVaultSpec(2);
    expect(spec.accountant).toBe('hub');
    const d = await deployVaultSystem(chain.node.rpcUrl, { vaults: [spec] });
    const [v] = d.vaults;
    const state = () =>
      pub.readContract({
        address: v.accountant,
        abi: dv.nestHubAccountantAbi,
        functionName: 'getAccountantState',
      });
    const decoded = async () => {
      const call = accountantStateCall(v.accountant, true);
      const { data } = await pub.call({ to: call.target, data: call.data });
      return decodeAccountantState(data);
    };
    const startBlock = Number(await pub.getBlockNumber()) + 1;
    const perf = BigInt(spec.performanceFee ?? 0);
    const mgmt = BigInt(spec.managementFeeBps);
    // The contract's formula, mirrored: fees accrued by an update to `gross` with `supply` shares.
    let booked = await state();
    const expectFees = (gross: bigint, supply: bigint, at: bigint) => {
      const shares = supply < booked.totalSharesLastUpdate ? supply : booked.totalSharesLastUpdate;
      const minRate = gross < booked.lastGrossRate ? gross : booked.lastGrossRate;
      let fees = (((((shares * minRate) / ONE) * mgmt) / ONE) * (at - booked.lastUpdateTimestamp)) / YEAR;
      if (gross > booked.highWaterMark)
        fees += (((shares * (gross - booked.highWaterMark)) / ONE) * perf) / ONE;
      return { fees, net: shares > 0n ? gross - (fees * ONE) / shares : gross };
    };
    const updates: { fees: bigint; net: bigint }[] = [];
    let gross = booked.lastGrossRate;
    for (const [step, supply] of [
      [1_004n, 5_000_000_000_000n],
      [1_010n, 5_200_000_000_000n],
      [998n, 4_900_000_000_000n],
    ] as const) {
      await anvilRpc(chain.node.rpcUrl, 'evm_increaseTime', [3 * 86_400]);
      gross = (gross * step) / 1_000n;
      const r = await sendTx(
        chain.node.rpcUrl,
        deployer,
        v.accountant,
        dv.nestHubAccountantAbi as Abi,
        'updateExchangeRate',
        [gross, supply],
      );
      const at = (await pub.getBlock({ blockNumber: r.blockNumber })).timestamp;
      const want = expectFees(gross, supply, at);
      const s = await state();
      expect(s.exchangeRate, 'net rate').toBe(want.net);
      expect(s.feesOwedInBase - booked.feesOwedInBase, 'fees owed rise').toBe(want.fees);
      updates.push(want);
      booked = s;
      // The ingester's decoding equals the devnet ABI's read of the same state.
      expect(await decoded()).toEqual({
        layout: 'hub',
        feesOwedInBase: s.feesOwedInBase,
        exchangeRate: s.exchangeRate,
        isPaused: s.isPaused,
        managementFee: Number(s.managementFee),
      });
    }
    // The first update has no shares at the last update: no fee; the second passes the high-water mark.
    expect(updates.map((u) => u.fees > 0n)).toEqual([false, true, true]);
    expect(updates[1].fees).toBeGreaterThan(updates[2].fees);

    const config = parseConfig({
      dataDir: root,
      chains: [localChain({ name: 'devnet', rpcUrls: [chain.node.rpcUrl], confirmations: 0, startBlock })],
      vaults: [
        {
          ...usdcVault({ slug: 'hub', name: 'hub', ...v, teller: v.tellerVeda, usdc: d.asset }),
          isHubAccountant: true,
        },
      ],
    });
    const bus = await openBus(join(root, 'bus'));
    const head = Number(await pub.getBlockNumber());
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    await vi.waitFor(() => expect(ingest.progress()[0]?.next, 'the ingester').toBeGreaterThan(head), {
      timeout: 30_000,
      interval: 25,
    });
    await ingest.stop();
    const read = async (f: Parameters<typeof readFamily>[2]) =>
      liveEvents(await readFamily(bus, config.topicPrefix, f), (r) => `${r.blockHash}:${r.logIndex}`).sort(
        (a, b) => (a.blockNumber as number) - (b.blockNumber as number),
      );
    const rates = (await read('rates')).filter((r) => r.source !== 'READ');
    expect(rates.map((r) => [r.vault, r.rate, r.isPaused])).toEqual(
      updates.map((u) => ['hub', u.net.toString(), false]),
    );
    const fees = (await read('fees')).filter((r) => r.kind === 'MANAGEMENT');
    expect(fees.map((r) => [r.token, r.amount, r.decimals])).toEqual(
      updates.filter((u) => u.fees > 0n).map((u) => [lc(d.asset), u.fees.toString(), 6]),
    );
    const snaps = (await readFamily(bus, config.topicPrefix, 'snapshots')).filter(
      (r) => r.kind === 'ACCOUNTANT',
    );
    expect(snaps.length, 'an ACCOUNTANT snapshot').toBeGreaterThan(0);
    expect(snaps.at(-1)).toMatchObject({
      vault: 'hub',
      token: lc(v.accountant),
      amount: booked.exchangeRate.toString(),
      isPaused: false,
    });
  }, 120_000);
});
