/**
 * The separate OFT adapter (`coreShareOftAddress`) watched under its own role, without
 * double counting a share that is its own OFT, and the NestVault deposit fee priced
 * from `fees(1)` read before the range and the range's `SetFee` events.
 */
import { encodeFunctionResult, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { type ContractRole, decodeLog, type RawLog } from '../../ingest/evm/decode.ts';
import { depositFees } from '../../ingest/evm/deposit-fees.ts';
import { mapLogs } from '../../ingest/evm/map.ts';
import { alice, at, bob, ident, TS } from './evm-decode-support.ts';
import { A, addr, canonical, ev, logOf, testConfig } from './evm-support.ts';

const OFT = addr(0x0f70);
const GUID = `0x${'ab'.repeat(32)}` as Hex;

type Setting = { rate: number; flat: bigint };

/** A reader answering `fees(1)` with `setting` (the RPC the follower reads through), recording what was asked. */
function readerOf(setting: Setting | undefined) {
  const asked: { target: string; block: number }[] = [];
  return {
    asked,
    async read(calls: { target: Hex; data: Hex }[], block: number) {
      for (const c of calls) asked.push({ target: c.target, block });
      return calls.map(() =>
        setting
          ? encodeFunctionResult({ abi: abis.nestVaultViews, functionName: 'fees', result: setting })
          : undefined,
      );
    },
  };
}

/** Decodes `logs` by the role `config` gives their address, prices the deposits through `reader`, and maps them. */
async function ingest(config: ReturnType<typeof testConfig>, logs: RawLog[], reader = readerOf(undefined)) {
  const contracts = chainContracts(config, config.chains[0]);
  const decoded = logs.map((l) => {
    const role = contracts.byAddress.get(l.address.toLowerCase())?.role as ContractRole;
    const d = decodeLog(role, l);
    if (!d) throw new Error(`log ${l.logIndex} did not decode as ${role}`);
    return d;
  });
  const fees = await depositFees(reader, decoded);
  const res = mapLogs(
    {
      contracts,
      blockTime: (n) => TS + n,
      decimals: new Map(),
      pausedAfter: () => false,
      depositFee: (d) => fees.get(d),
    },
    decoded,
  );
  return { contracts, records: canonical(res.emitted) };
}

const oftLogs = (address: Hex) => [
  logOf(
    address,
    ev(abis.shareEvents, 'OFTSent'),
    { guid: GUID, dstEid: 30101, fromAddress: alice, amountSentLD: 7_000_001n, amountReceivedLD: 7_000_001n },
    at(1, 0),
  ),
  logOf(
    address,
    ev(abis.shareEvents, 'OFTReceived'),
    { guid: GUID, srcEid: 30101, toAddress: bob, amountReceivedLD: 3_000_002n },
    at(2, 1),
  ),
];

const bridged = [
  {
    family: 'activity',
    record: {
      ...ident(1, 0),
      kind: 'BRIDGE_OUT',
      user: alice,
      shares: '7000001',
      sharesToken: A.share,
      assets: '0',
      assetsToken: A.share,
      assetsDecimals: 6,
    },
  },
  {
    family: 'activity',
    record: {
      ...ident(2, 1),
      kind: 'BRIDGE_IN',
      user: bob,
      shares: '3000002',
      sharesToken: A.share,
      assets: '0',
      assetsToken: A.share,
      assetsDecimals: 6,
    },
  },
];

describe('EVM OFT adapter', () => {
  it('watches the vault OFT adapter and maps its bridge events to the vault', async () => {
    const res = await ingest(testConfig({ vault: { coreShareOftAddress: OFT } }), oftLogs(OFT));
    expect(res.contracts.byAddress.get(OFT)?.role).toBe('oft');
    expect(res.contracts.addresses).toContain(OFT);
    expect(res.records).toEqual(bridged);
  });

  it('maps each log of a share that is its own OFT once', async () => {
    const res = await ingest(testConfig({ vault: { coreShareOftAddress: A.share } }), oftLogs(A.share));
    expect(res.contracts.byAddress.get(A.share)?.role).toBe('share');
    expect(res.contracts.addresses.filter((a) => a === A.share)).toHaveLength(1);
    expect(res.records).toEqual(bridged);
  });

  it('watches no OFT when the vault has none', async () => {
    const res = await ingest(testConfig(), []);
    expect([...res.contracts.byAddress.values()].map((c) => c.role).sort()).toEqual(
      ['accountant', 'authority', 'nestVault', 'queue', 'share', 'teller'].sort(),
    );
  });
});

describe('EVM NestVault deposit fee', () => {
  const deposit = (assets: bigint, tx: number, block: number) =>
    logOf(
      A.nestVault,
      ev(abis.nestVaultEvents, 'Deposit'),
      { caller: alice, receiver: alice, assets, shares: assets / 2n },
      at(tx, 0, block),
    );
  const setFee = (old: Setting, fee: Setting, tx: number, block: number) =>
    logOf(A.nestVault, ev(abis.nestVaultEvents, 'SetFee'), { f: 1, oldFee: old, fee }, at(tx, 0, block));

  it('prices each deposit with the setting in force, read before the range then followed through SetFee', async () => {
    const before = { rate: 2_500, flat: 1_000n };
    const after = { rate: 12_345, flat: 0n };
    const logs = [
      deposit(4_790_059_600n, 1, 10),
      setFee(before, after, 2, 11),
      deposit(999_999n, 3, 12),
      // A setting of another fee kind changes nothing for deposits.
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'SetFee'),
        { f: 2, oldFee: { rate: 0, flat: 0n }, fee: { rate: 900_000, flat: 5n } },
        at(4, 0, 13),
      ),
      deposit(1_000_000_000_000n, 5, 14),
    ];
    const reader = readerOf(before);
    const { records } = await ingest(testConfig(), logs, reader);
    // One read for the vault, at the block before its first deposit of the range.
    expect(reader.asked).toEqual([{ target: A.nestVault, block: 9 }]);
    const charged = [
      [1, 10, 1_000n + (4_790_059_600n * 2_500n) / 1_000_000n],
      [3, 12, (999_999n * 12_345n) / 1_000_000n],
      [5, 14, (1_000_000_000_000n * 12_345n) / 1_000_000n],
    ] as const;
    expect(records.filter((r) => r.family === 'fees')).toEqual(
      charged.map(([tx, block, amount]) => ({
        family: 'fees',
        record: {
          ...ident(tx, 0, block),
          kind: 'DEPOSIT',
          token: A.usdc,
          amount: amount.toString(),
          decimals: 6,
          usdPrice: '0.9998',
        },
      })),
    );
    expect(records.filter((r) => r.family === 'activity').map((r) => r.record.kind)).toEqual([
      'DEPOSIT',
      'DEPOSIT',
      'DEPOSIT',
    ]);
  });

  it('publishes no deposit fee when the setting is zero or cannot be read', async () => {
    for (const reader of [readerOf({ rate: 0, flat: 0n }), readerOf(undefined)]) {
      const { records } = await ingest(testConfig(), [deposit(5_000_000n, 1, 10)], reader);
      expect(records.map((r) => r.family)).toEqual(['activity']);
    }
  });
});
