/**
 * A Nest hub accountant on anvil: the ingester decodes `getAccountantState()`, publishes
 * the net rates, and splits each accrual into management and performance fee as the
 * hub's fee logic does (reference section 6). The expected split is the contract's own:
 * each update is first run from a snapshot with the performance fee off (its rise of
 * `feesOwedInBase` is the management fee) and with the management fee off (the
 * performance fee), then reverted and run for real at the same timestamp.
 */
import { join } from 'node:path';
import { type Abi, createPublicClient, type Hex, http, type PublicClient } from 'viem';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { anvilAccount } from '../../devnet/anvil.ts';
import { defaultVaultSpec, deployVaultSystem } from '../../devnet/deploy.ts';
import { accountantStateCall, decodeAccountantState } from '../../ingest/evm/accountant.ts';
import { PERFORMANCE_LOG_OFFSET } from '../../ingest/evm/accrual.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { registryRecord } from '../../ingest/registry.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { type ApiHarness, startApiHarness } from '../support/api-harness.ts';
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
const DAY = 86_400;
const chain = useAnvilNode('vs-evm-hub-');
const { root } = chain;
let api: ApiHarness | undefined;
afterAll(async () => api?.close());

type Step =
  | { gross: bigint; supply: bigint; days: number; note: string }
  | { hurdleRate: number }
  | { claim: true };

describe('Nest hub accountant on anvil', () => {
  it('splits each accrual into management and performance fee as the contract does, through /v1/vaults/fees', async () => {
    const url = chain.node.rpcUrl;
    const pub = createPublicClient({ transport: http(url) }) as PublicClient;
    const spec = defaultVaultSpec(2);
    expect(spec.accountant).toBe('hub');
    const d = await deployVaultSystem(url, { vaults: [spec] });
    const [v] = d.vaults;
    const hubAbi = dv.nestHubAccountantAbi as Abi;
    const send = (fn: string, args: unknown[]) => sendTx(url, deployer, v.accountant, hubAbi, fn, args);
    const state = () =>
      pub.readContract({
        address: v.accountant,
        abi: dv.nestHubAccountantAbi,
        functionName: 'getAccountantState',
      });
    const startBlock = Number(await pub.getBlockNumber()) + 1;
    const start = await state();
    const hwm0 = start.highWaterMark;

    /** The rise of feesOwedInBase of updating to (gross, supply) at `at`, after `setup`, then reverted. */
    const trial = async (
      setup: [string, unknown[]] | undefined,
      gross: bigint,
      supply: bigint,
      at: number,
    ) => {
      const snap = (await anvilRpc(url, 'evm_snapshot', [])) as Hex;
      if (setup) await send(...setup);
      const before = (await state()).feesOwedInBase;
      await anvilRpc(url, 'evm_setNextBlockTimestamp', [at]);
      await send('updateExchangeRate', [gross, supply]);
      const rise = (await state()).feesOwedInBase - before;
      await anvilRpc(url, 'evm_revert', [snap]);
      return rise;
    };

    const steps: Step[] = [
      // The example found on the real contracts: totalSharesLastUpdate is 0, so the management fee is 0 and the
      // gain above the high-water mark makes it all performance fee.
      { gross: (hwm0 * 1_004n) / 1_000n, supply: 5_000_000_000_000n, days: 3, note: 'performance only' },
      { gross: (hwm0 * 1_014n) / 1_000n, supply: 5_200_000_000_000n, days: 3, note: 'both kinds' },
      { claim: true },
      { gross: (hwm0 * 1_012n) / 1_000n, supply: 4_900_000_000_000n, days: 3, note: 'below the HWM' },
      // A 20% yearly hurdle: 6 days later the HWM to beat is 0.33% higher.
      { hurdleRate: 200_000 },
      { gross: (hwm0 * 1_015n) / 1_000n, supply: 4_900_000_000_000n, days: 3, note: 'within the hurdle' },
      { gross: (hwm0 * 1_030n) / 1_000n, supply: 5_000_000_000_000n, days: 3, note: 'above the hurdle' },
    ];
    const updates: { note: string; management: bigint; performance: bigint; net: bigint; block: bigint }[] =
      [];
    let time = Number((await pub.getBlock()).timestamp);
    for (const step of steps) {
      if ('claim' in step) {
        await send('claimFees', [d.asset]);
        continue;
      }
      if ('hurdleRate' in step) {
        await send('setHurdleRate', [step.hurdleRate]);
        continue;
      }
      time += step.days * DAY;
      const management = await trial(['setPerformanceFee', [0]], step.gross, step.supply, time);
      const performance = await trial(['setManagementFee', [0]], step.gross, step.supply, time);
      const before = await state();
      await anvilRpc(url, 'evm_setNextBlockTimestamp', [time]);
      const r = await send('updateExchangeRate', [step.gross, step.supply]);
      const after = await state();
      // The two parts make the whole rise: the contract accrues them independently.
      expect(after.feesOwedInBase - before.feesOwedInBase, step.note).toBe(management + performance);
      updates.push({
        note: step.note,
        management,
        performance,
        net: after.exchangeRate,
        block: r.blockNumber,
      });
    }
    expect(
      updates.map((u) => [u.note, u.management > 0n, u.performance > 0n]),
      'the scenario covers each case',
    ).toEqual([
      ['performance only', false, true],
      ['both kinds', true, true],
      ['below the HWM', true, false],
      ['within the hurdle', true, false],
      ['above the hurdle', true, true],
    ]);

    // The ingester's decoding equals the devnet ABI's read of the same state.
    const s = await state();
    const call = accountantStateCall(v.accountant, true);
    const { data } = await pub.call({ to: call.target, data: call.data });
    expect(decodeAccountantState(data)).toEqual({
      layout: 'hub',
      feesOwedInBase: s.feesOwedInBase,
      exchangeRate: s.exchangeRate,
      isPaused: s.isPaused,
      managementFee: Number(s.managementFee),
      hub: {
        lastGrossRate: s.lastGrossRate,
        totalSharesLastUpdate: s.totalSharesLastUpdate,
        lastUpdateTimestamp: s.lastUpdateTimestamp,
        managementFee: Number(s.managementFee),
      },
    });

    const config = parseConfig({
      dataDir: join(root, 'ingest'),
      chains: [localChain({ name: 'devnet', rpcUrls: [url], confirmations: 0, startBlock })],
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
    const fees = await read('fees');
    const accrued = fees.filter((r) => r.kind === 'MANAGEMENT' || r.kind === 'PERFORMANCE');
    const want = updates.flatMap((u) =>
      (['MANAGEMENT', 'PERFORMANCE'] as const)
        .map((kind) => ({ kind, amount: kind === 'MANAGEMENT' ? u.management : u.performance }))
        .filter((x) => x.amount > 0n)
        .map((x) => [Number(u.block), x.kind, lc(d.asset), x.amount.toString(), 6]),
    );
    expect(accrued.map((r) => [r.blockNumber, r.kind, r.token, r.amount, r.decimals])).toEqual(want);
    // The PERFORMANCE record has an identity of its own next to the MANAGEMENT one of the same log.
    for (const r of accrued.filter((x) => x.kind === 'PERFORMANCE'))
      expect(r.logIndex as number).toBeGreaterThanOrEqual(PERFORMANCE_LOG_OFFSET);
    expect(fees.filter((r) => r.kind === 'CLAIMED')).toHaveLength(1);

    // Stored and served: /v1/vaults/fees reports each kind on the day it accrued.
    const vault = config.vaults[0];
    const lines = [
      JSON.stringify({ family: 'registry', record: registryRecord(vault, Date.now()) }),
      ...fees.map((record) => JSON.stringify({ family: 'fees', record })),
    ];
    api = await startApiHarness(lines, { clock: () => time * 1000 });
    const day = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);
    const blockTime = new Map(fees.map((r) => [r.blockNumber as number, r.blockTimestamp as number]));
    const res = await api.request(
      `/v1/vaults/fees?slug=hub&startDate=${day(time - 20 * DAY)}&endDate=${day(time)}`,
    );
    expect(res.status, res.text).toBe(200);
    const [served] = res.body.data;
    for (const [name, of] of [
      ['managementFee', (u: (typeof updates)[number]) => u.management],
      ['performanceFee', (u: (typeof updates)[number]) => u.performance],
    ] as const) {
      const byDay = new Map<string, number>();
      for (const u of updates) {
        const k = day(blockTime.get(Number(u.block)) as number);
        byDay.set(k, (byDay.get(k) ?? 0) + Number(of(u)) / 1e6);
      }
      for (const p of served[name] as { date: string; value: number }[])
        expect(p.value, `${name} ${p.date}`).toBeCloseTo(byDay.get(p.date) ?? 0, 9);
    }
  }, 180_000);
});
