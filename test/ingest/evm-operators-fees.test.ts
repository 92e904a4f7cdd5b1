/**
 * OperatorSet and the fee-rate settings are stored. Logs built with viem's
 * encoders are decoded by role and mapped (every record through its schema and Avro), every
 * topic0 is checked against the reference's appendix, the records go through the real CLI
 * (`replay`) into chDB, and the views answer the latest operator state and the fee-rate history
 * with reorg retractions hidden. Deposit fees follow the fee-rate history kept in the checkpoint.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeFunctionResult, type Hex, toEventSelector } from 'viem';
import { afterAll, describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { type DecodedLog, decodeLog, type RawLog } from '../../ingest/evm/decode.ts';
import { depositFees, type FeeSettingMark } from '../../ingest/evm/deposit-fees.ts';
import { MAPPED_EVENTS, mapLogs } from '../../ingest/evm/map.ts';
import { ACCOUNTANT_FEE_EVENTS } from '../../ingest/evm/map-accountant.ts';
import { SET_FEE_EVENT } from '../../ingest/evm/map-nest.ts';
import { ROOT, runCli } from '../support/cli.ts';
import { decodeLogGeneric } from './evm-decode-support.ts';
import { A, addr, canonical, ev, logOf, testConfig } from './evm-support.ts';

// The product's reference stands beside the repository (../shared, in CI too); without it, the copy below.
const REFERENCE = join(ROOT, '..', 'shared', 'reference', 'contracts-and-flows.md');
const REGISTRY = addr(0x0be7);
const config = testConfig({ chain: { operatorRegistry: REGISTRY } });
const contracts = chainContracts(config, config.chains[0]);
const alice = addr(0xa11ce);
const bob = addr(0xb0b);
const keeper = addr(0x6ee9);
const at = (block: number, index: number, tx = block) => ({ block, tx, index });

function decode(logs: RawLog[]): DecodedLog[] {
  return logs.map((l) => {
    const role = contracts.byAddress.get(l.address.toLowerCase())?.role;
    if (!role) throw new Error(`no role for ${l.address}`);
    const d = decodeLog(role, l);
    if (!d) throw new Error(`log ${l.blockNumber}/${l.logIndex} did not decode`);
    expect(d).toEqual(decodeLogGeneric(role, l));
    return d;
  });
}

function run(logs: RawLog[]) {
  const res = mapLogs(
    { contracts, blockTime: (n) => 1_760_000_000 + n * 12, decimals: new Map(), pausedAfter: () => false },
    decode(logs),
  );
  return { emitted: res.emitted, records: canonical(res.emitted), unpublished: res.unpublished };
}

const operatorSet = (
  address: Hex,
  controller: Hex,
  operator: Hex,
  approved: boolean,
  p: ReturnType<typeof at>,
) => logOf(address, ev(abis.operatorRegistryEvents, 'OperatorSet'), { controller, operator, approved }, p);
const setFee = (f: number, old: [number, bigint], fee: [number, bigint], p: ReturnType<typeof at>) =>
  logOf(
    A.nestVault,
    ev(abis.nestVaultEvents, 'SetFee'),
    { f, oldFee: { rate: old[0], flat: old[1] }, fee: { rate: fee[0], flat: fee[1] } },
    p,
  );
const accFee = (
  abi: readonly unknown[],
  name: string,
  oldFee: number,
  newFee: number,
  p: ReturnType<typeof at>,
) => logOf(A.accountant, ev(abi, name), { oldFee, newFee }, p);

/** topic0 by canonical signature, from the reference's appendix (or the copy below when it is absent). */
function referenceTopics(): Map<string, string> {
  const out = new Map<string, string>();
  if (existsSync(REFERENCE)) {
    for (const m of readFileSync(REFERENCE, 'utf8').matchAll(/^(0x[0-9a-f]{64}) {2}(\S+)$/gm))
      out.set(m[2], m[1]);
    return out;
  }
  // Copied from ../shared/reference/contracts-and-flows.md, "Appendix: topic0 of every signature above".
  for (const [sig, topic] of [
    [
      'OperatorSet(address,address,bool)',
      '0xceb576d9f15e4e200fdb5096d64d5dfd667e16def20c1eefd14256d8e3faa267',
    ],
    [
      'PlatformFeeUpdated(uint16,uint16)',
      '0x84e4fe32bf74c4011a7e1fde79c63acdffaf92a0112cde153e7b0abee665bc6b',
    ],
    [
      'PerformanceFeeUpdated(uint16,uint16)',
      '0xba8506b6cb85330fea21cbca8490aafb6a69b166f06201ef755eb511b2709fc1',
    ],
    [
      'ManagementFeeUpdated(uint16,uint16)',
      '0x7fa71bc8199b41215c8786fc03983be5a27180965feae35db511cd958631826f',
    ],
    [
      'ManagementFeeUpdated(uint32,uint32)',
      '0x445134a9663f61e88491e94ab4813fb5b28a76d4145bcb1b567d45c675e0f57d',
    ],
    [
      'PerformanceFeeUpdated(uint32,uint32)',
      '0x9addc5eeb11c6317acf61d62e36638a1bf153e3e0fd2ee245a97a07bd98d5851',
    ],
    [SET_FEE_EVENT, '0x3cd9174d5daf6b359433bc1591a606ee6f579489293a2ce14ff24265758f6d0b'],
  ])
    out.set(sig, topic);
  return out;
}

describe('OperatorSet and fee-rate settings: decoding and mapping', () => {
  it('topic0 of every stored signature is the reference one', () => {
    const ref = referenceTopics();
    const sigs = [...[...ACCOUNTANT_FEE_EVENTS.values()].map((e) => e.event), SET_FEE_EVENT];
    sigs.push('OperatorSet(address,address,bool)');
    for (const sig of sigs) expect(toEventSelector(sig), sig).toBe(ref.get(sig));
    for (const [topic, e] of ACCOUNTANT_FEE_EVENTS) expect(topic).toBe(ref.get(e.event));
    // Each is fetched from the node (the eth_getLogs topic filter).
    expect(MAPPED_EVENTS.operatorRegistry).toEqual(['OperatorSet']);
    expect(MAPPED_EVENTS.nestVault).toContain('OperatorSet');
    for (const n of ['PlatformFeeUpdated', 'PerformanceFeeUpdated', 'ManagementFeeUpdated'])
      expect(MAPPED_EVENTS.accountant).toContain(n);
  });

  it('maps OperatorSet of the registry and of the NestVault', () => {
    expect(contracts.byAddress.get(REGISTRY)?.role).toBe('operatorRegistry');
    const { records, unpublished } = run([
      operatorSet(REGISTRY, alice, keeper, true, at(10, 0)),
      operatorSet(A.nestVault, bob, alice, false, at(11, 1)),
    ]);
    expect(unpublished.size).toBe(0);
    expect(
      records.map((r) => [
        r.family,
        r.record.source,
        r.record.contract,
        r.record.controller,
        r.record.operator,
        r.record.approved,
      ]),
    ).toEqual([
      ['operators', 'REGISTRY', REGISTRY, alice, keeper, true],
      ['operators', 'VAULT', A.nestVault, bob, alice, false],
    ]);
    expect(records[0].record).toMatchObject({
      chainId: 31337,
      blockNumber: 10,
      logIndex: 0,
      removed: false,
      vault: 'v1',
    });
  });

  it('maps every fee-rate event shape with its kind and scale', () => {
    const { records, unpublished } = run([
      accFee(abis.accountantEvents, 'PlatformFeeUpdated', 100, 150, at(20, 0)),
      accFee(abis.accountantEvents, 'PerformanceFeeUpdated', 1_000, 2_000, at(20, 1)),
      accFee(abis.accountantEvents, 'ManagementFeeUpdated', 50, 65_535, at(20, 2)),
      accFee(abis.nestAccountantEvents, 'ManagementFeeUpdated', 5_000, 7_500, at(21, 0)),
      accFee(abis.nestAccountantEvents, 'PerformanceFeeUpdated', 50_000, 4_294_967_295, at(21, 1)),
      setFee(0, [0, 0n], [1_500, 0n], at(22, 0)),
      setFee(1, [0, 0n], [2_000, 10n ** 30n], at(22, 1)),
      setFee(2, [300, 5n], [0, 0n], at(22, 2)),
      setFee(7, [0, 0n], [1, 1n], at(22, 3)),
    ]);
    const rows = records.map((r) => {
      const x = r.record;
      return [x.kind, x.event, x.oldRate, x.newRate, x.rateScale, x.oldFlat, x.newFlat, x.contract];
    });
    expect(rows).toEqual([
      ['PLATFORM', 'PlatformFeeUpdated(uint16,uint16)', 100, 150, 10_000, '0', '0', A.accountant],
      ['PERFORMANCE', 'PerformanceFeeUpdated(uint16,uint16)', 1_000, 2_000, 10_000, '0', '0', A.accountant],
      ['MANAGEMENT', 'ManagementFeeUpdated(uint16,uint16)', 50, 65_535, 10_000, '0', '0', A.accountant],
      ['MANAGEMENT', 'ManagementFeeUpdated(uint32,uint32)', 5_000, 7_500, 1_000_000, '0', '0', A.accountant],
      [
        'PERFORMANCE',
        'PerformanceFeeUpdated(uint32,uint32)',
        50_000,
        4_294_967_295,
        1_000_000,
        '0',
        '0',
        A.accountant,
      ],
      ['INSTANT_REDEMPTION', SET_FEE_EVENT, 0, 1_500, 1_000_000, '0', '0', A.nestVault],
      ['DEPOSIT', SET_FEE_EVENT, 0, 2_000, 1_000_000, '0', (10n ** 30n).toString(), A.nestVault],
      ['REDEMPTION', SET_FEE_EVENT, 300, 0, 1_000_000, '5', '0', A.nestVault],
    ]);
    expect(records.every((r) => r.family === 'fee_rates')).toBe(true);
    // A fee index outside the NestVault Fees enum has no kind: counted, not stored.
    expect([...unpublished]).toEqual([['nestVault.SetFee', 1]]);
  });

  it('an Enter/Exit reported by a more specific event, or a bridge mint, is not "unpublished"', () => {
    const enter = (asset: Hex, p: ReturnType<typeof at>) =>
      logOf(
        A.share,
        ev(abis.shareEvents, 'Enter'),
        { from: alice, asset, amount: 10n, to: alice, shares: 9n },
        p,
      );
    const nestDeposit = logOf(
      A.nestVault,
      ev(abis.nestVaultEvents, 'Deposit'),
      { caller: alice, receiver: alice, assets: 10n, shares: 9n },
      at(30, 1),
    );
    const { records, unpublished } = run([enter(A.usdc, at(30, 0)), nestDeposit, enter(addr(0), at(31, 0))]);
    expect(records.map((r) => [r.family, r.record.kind])).toEqual([['activity', 'DEPOSIT']]);
    expect(unpublished.size).toBe(0);
  });
});

describe('deposit fees follow the fee-rate history kept in the checkpoint', () => {
  const deposit = (assets: bigint, p: ReturnType<typeof at>) =>
    logOf(
      A.nestVault,
      ev(abis.nestVaultEvents, 'Deposit'),
      { caller: alice, receiver: alice, assets, shares: assets },
      p,
    );
  /** A node answering `fees(1)` with `setting` at any block, counting the reads. */
  const node = (setting: { rate: number; flat: bigint }) => {
    const reads: number[] = [];
    return {
      reads,
      read: async (_calls: readonly unknown[], block: number) => {
        reads.push(block);
        return [encodeFunctionResult({ abi: abis.nestVaultViews, functionName: 'fees', result: setting })];
      },
    };
  };

  it('reads the setting once, then prices later ranges from the checkpointed history, across SetFee changes', async () => {
    const known: Record<string, FeeSettingMark> = {};
    const chain = node({ rate: 1_000, flat: 7n });
    const first = decode([deposit(1_000_000n, at(50, 0))]);
    const fees1 = await depositFees(chain, first, known);
    expect(fees1.get(first[0])).toBe(7n + 1_000n); // 7 + 1e6 * 1000 / 1e6
    expect(chain.reads).toEqual([49]);
    expect(known[A.nestVault]).toEqual({ block: 49, rate: 1_000, flat: '7' });

    // Next range: no read; a SetFee between two deposits prices each by the rate in force then.
    const second = decode([
      deposit(2_000_000n, at(60, 0)),
      setFee(1, [1_000, 7n], [2_500, 0n], at(61, 0)),
      setFee(2, [0, 0n], [9_999, 0n], at(61, 1)),
      deposit(2_000_000n, at(62, 0)),
    ]);
    const fees2 = await depositFees(chain, second, known);
    expect(chain.reads).toEqual([49]);
    expect(fees2.get(second[0])).toBe(7n + 2_000n);
    expect(fees2.get(second[3])).toBe(5_000n);
    expect(known[A.nestVault]).toEqual({ block: 61, rate: 2_500, flat: '0' });
  });

  it('a vault whose SetFee(DEPOSIT) comes first in its range is never read', async () => {
    const known: Record<string, FeeSettingMark> = {};
    const chain = node({ rate: 999_999, flat: 0n });
    const logs = decode([setFee(1, [0, 0n], [3_000, 1n], at(70, 0)), deposit(1_000_000n, at(71, 0))]);
    const fees = await depositFees(chain, logs, known);
    expect(chain.reads).toEqual([]);
    expect(fees.get(logs[1])).toBe(3_001n);
  });
});

describe('stored in chDB: current operators and the fee-rate history, retractions hidden', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vs-opfees-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env = { VAULTSTREAM_DATA_DIR: join(dir, 'data') };

  it('replays the mapped records and reads vault_operators and fee_rate_history', async () => {
    const { emitted } = run([
      operatorSet(REGISTRY, alice, keeper, true, at(100, 0)),
      operatorSet(A.nestVault, alice, keeper, true, at(100, 1)),
      operatorSet(REGISTRY, bob, keeper, true, at(100, 2)),
      operatorSet(REGISTRY, alice, keeper, false, at(101, 0)),
      // Orphaned by a reorg below: bob's revocation never happened.
      operatorSet(REGISTRY, bob, keeper, false, at(102, 0)),
      setFee(1, [0, 0n], [2_000, 0n], at(100, 3)),
      accFee(abis.accountantEvents, 'ManagementFeeUpdated', 0, 50, at(100, 4)),
      setFee(1, [2_000, 0n], [1_000, 5n], at(103, 0)),
      // Orphaned too: the 1% rate was never set.
      accFee(abis.accountantEvents, 'ManagementFeeUpdated', 50, 100, at(102, 1)),
    ]);
    const retracted = emitted
      .filter((e) => e.record.blockNumber === 102)
      .map((e) => ({ ...e, record: { ...e.record, removed: true } }));
    const lines = [...emitted, ...retracted].map((e) =>
      JSON.stringify({ family: e.family, record: e.record }),
    );
    const file = join(dir, 'events.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const replay = await runCli(['replay', file], env);
    expect(replay.code, replay.stderr).toBe(0);

    const sql = async (q: string) => {
      const r = await runCli(['sql', q, '--format', 'json'], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as Record<string, unknown>[];
    };
    const ops = await sql(
      'SELECT controller, operator, approved, via_registry, via_vault, toUnixTimestamp(updated_at) AS t FROM vaultstream.vault_operators ORDER BY controller',
    );
    const t = (n: number) => 1_760_000_000 + n * 12;
    expect(ops).toEqual([
      // bob: his revocation was orphaned (block 102), so the registry approval stands.
      { controller: bob, operator: keeper, approved: 1, via_registry: 1, via_vault: 0, t: t(100) },
      // alice: revoked on the registry, still approved on the NestVault.
      { controller: alice, operator: keeper, approved: 1, via_registry: 0, via_vault: 1, t: t(101) },
    ]);
    const history = await sql(
      "SELECT kind, contract, new_rate, rate_scale, rate, toString(new_flat) AS flat, toUnixTimestamp(valid_from) AS f, toUnixTimestamp(valid_to) AS t FROM vaultstream.fee_rate_history WHERE vault = 'v1' ORDER BY kind, valid_from",
    );
    expect(history).toEqual([
      {
        kind: 'DEPOSIT',
        contract: A.nestVault,
        new_rate: 2_000,
        rate_scale: 1_000_000,
        rate: 0.002,
        flat: '0',
        f: t(100),
        t: t(103),
      },
      {
        kind: 'DEPOSIT',
        contract: A.nestVault,
        new_rate: 1_000,
        rate_scale: 1_000_000,
        rate: 0.001,
        flat: '5',
        f: t(103),
        t: null,
      },
      {
        kind: 'MANAGEMENT',
        contract: A.accountant,
        new_rate: 50,
        rate_scale: 10_000,
        rate: 0.005,
        flat: '0',
        f: t(100),
        t: null,
      },
    ]);
  }, 180_000);
});
