/**
 * Decoding and mapping of every event variant the EVM ingester reads: logs built
 * with viem's encoders, decoded by role, mapped to records, and each record checked
 * field by field and through its family's schema and Avro encoding.
 */
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { chainContracts } from '../../ingest/evm/contracts.ts';
import { type ContractRole, decodeLog, decodeLogGeneric, type RawLog } from '../../ingest/evm/decode.ts';
import { mapLogs, NO_DEADLINE } from '../../ingest/evm/map.ts';
import { A, addr, blockHash, canonical, ev, logOf, testConfig, txHash } from './evm-support.ts';

const config = testConfig();
const contracts = chainContracts(config, config.chains[0]);
const roleOf = (l: RawLog) => contracts.byAddress.get(l.address.toLowerCase())?.role as ContractRole;
const TS = 1_760_000_000;
const alice = addr(0xa11ce);
const bob = addr(0xb0b);
const ZERO = addr(0);

/** Decodes and maps `logs` (one block each), with `paused` as the accountant state after every block. */
function run(logs: RawLog[], paused = false, decimals = new Map<string, number>()) {
  const decoded = logs.map((l) => {
    const d = decodeLog(roleOf(l), l);
    if (!d) throw new Error(`log ${l.logIndex} did not decode`);
    // The fast word-slicing decoder and viem's generic one agree on every variant.
    expect(d).toEqual(decodeLogGeneric(roleOf(l), l));
    return d;
  });
  const res = mapLogs({ contracts, blockTime: (n) => TS + n, decimals, pausedAfter: () => paused }, decoded);
  return { records: canonical(res.emitted), unpublished: res.unpublished };
}

const at = (tx: number, index: number, block = 100) => ({ block, tx, index });
const ident = (tx: number, index: number, block = 100) => ({
  chainId: 31337,
  blockNumber: block,
  blockHash: blockHash(block),
  blockTimestamp: TS + block,
  txHash: txHash(tx),
  logIndex: index,
  removed: false,
  vault: 'v1',
});

describe('EVM decoding and mapping', () => {
  it('maps share transfers', () => {
    const { records } = run([
      logOf(
        A.share,
        ev(abis.shareEvents, 'Transfer'),
        { from: alice, to: bob, amount: 12_345_678_901_234_567_890n },
        at(1, 0),
      ),
    ]);
    expect(records).toEqual([
      {
        family: 'transfers',
        record: { ...ident(1, 0), token: A.share, from: alice, to: bob, amount: '12345678901234567890' },
      },
    ]);
  });

  it('maps both teller Deposit families, the Enter of the same transaction adding nothing', () => {
    const deposit = (abi: readonly unknown[], tx: number, extra: Record<string, unknown>) => [
      logOf(
        A.share,
        ev(abis.shareEvents, 'Enter'),
        { from: alice, asset: A.usdc, amount: 5_000_000n, to: alice, shares: 4_900_000n },
        at(tx, 0),
      ),
      logOf(
        A.share,
        ev(abis.shareEvents, 'Transfer'),
        { from: ZERO, to: alice, amount: 4_900_000n },
        at(tx, 1),
      ),
      logOf(
        A.teller,
        ev(abi, 'Deposit'),
        {
          nonce: 7n,
          receiver: alice,
          depositAsset: A.usdc,
          depositAmount: 5_000_000n,
          shareAmount: 4_900_000n,
          depositTimestamp: 1n,
          shareLockPeriodAtTimeOfDeposit: 0n,
          ...extra,
        },
        at(tx, 2),
      ),
    ];
    const veda = deposit(abis.tellerVedaEvents, 1, { referralAddress: bob });
    const nucleus = deposit(abis.tellerNucleusEvents, 2, {});
    expect(veda[2].topics[0]).not.toBe(nucleus[2].topics[0]);
    const { records } = run([...veda, ...nucleus]);
    const activity = records.filter((r) => r.family === 'activity');
    const expected = (tx: number) => ({
      family: 'activity',
      record: {
        ...ident(tx, 2),
        kind: 'DEPOSIT',
        user: alice,
        shares: '4900000',
        sharesToken: A.share,
        assets: '5000000',
        assetsToken: A.usdc,
        assetsDecimals: 6,
      },
    });
    expect(activity).toEqual([expected(1), expected(2)]);
    expect(records.filter((r) => r.family === 'transfers')).toHaveLength(2);
  });

  it('takes the user of a PredicateProxy deposit from the proxy share transfer', () => {
    const { records } = run([
      logOf(A.share, ev(abis.shareEvents, 'Transfer'), { from: ZERO, to: A.proxy, amount: 10n }, at(1, 0)),
      logOf(
        A.teller,
        ev(abis.tellerNucleusEvents, 'Deposit'),
        {
          nonce: 1n,
          receiver: A.proxy,
          depositAsset: A.usdc,
          depositAmount: 11n,
          shareAmount: 10n,
          depositTimestamp: 0n,
          shareLockPeriodAtTimeOfDeposit: 0n,
        },
        at(1, 1),
      ),
      logOf(A.share, ev(abis.shareEvents, 'Transfer'), { from: A.proxy, to: bob, amount: 10n }, at(1, 2)),
    ]);
    const dep = records.find((r) => r.family === 'activity');
    expect(dep?.record.user).toBe(bob);
    expect(dep?.record.kind).toBe('DEPOSIT');
  });

  it('maps a lone Enter (bulk deposit) and Exit, and bridge moves of both cross-chain families', () => {
    const { records } = run(
      [
        logOf(
          A.share,
          ev(abis.shareEvents, 'Enter'),
          { from: A.teller, asset: A.usdt, amount: 3n, to: alice, shares: 2n },
          at(1, 0),
        ),
        logOf(
          A.share,
          ev(abis.shareEvents, 'Exit'),
          { to: bob, asset: A.usdc, amount: 9n, from: bob, shares: 8n },
          at(2, 0),
        ),
        logOf(
          A.share,
          ev(abis.shareEvents, 'Exit'),
          { to: ZERO, asset: ZERO, amount: 0n, from: alice, shares: 50n },
          at(3, 0),
        ),
        logOf(
          A.teller,
          ev(abis.crossChainPlainEvents, 'MessageSent'),
          { messageId: blockHash(9), shareAmount: 50n, to: bob },
          at(3, 1),
        ),
        logOf(
          A.teller,
          ev(abis.crossChainIndexedEvents, 'MessageReceived'),
          { messageId: blockHash(8), shareAmount: 70n, to: bob },
          at(4, 0),
        ),
      ],
      false,
      new Map([[A.usdt, 18]]),
    );
    const acts = records.filter((r) => r.family === 'activity').map((r) => r.record);
    expect(
      acts.map((r) => [r.kind, r.user, r.shares, r.assets, r.assetsToken, r.assetsDecimals, r.logIndex]),
    ).toEqual([
      ['DEPOSIT', alice, '2', '3', A.usdt, 18, 0],
      ['WITHDRAW', bob, '8', '9', A.usdc, 6, 0],
      ['BRIDGE_OUT', alice, '50', '0', A.share, 6, 1],
      ['BRIDGE_IN', bob, '70', '0', A.share, 6, 0],
    ]);
  });

  it('maps both AtomicQueue variants: request, cancel (amount 0), fill', () => {
    const upd = (abi: readonly unknown[], amount: bigint, tx: number) =>
      logOf(
        A.queue,
        ev(abi, 'AtomicRequestUpdated'),
        {
          user: alice,
          offerToken: A.share,
          wantToken: A.usdc,
          amount,
          deadline: 2_000_000_000n,
          minPrice: 1_010_000n,
          timestamp: 5n,
        },
        at(tx, 0),
      );
    const logs = [
      upd(abis.atomicQueueIndexedEvents, 3_000_000n, 1),
      upd(abis.atomicQueuePlainEvents, 0n, 2),
      logOf(
        A.queue,
        ev(abis.atomicQueuePlainEvents, 'AtomicRequestFulfilled'),
        {
          user: alice,
          offerToken: A.share,
          wantToken: A.usdc,
          offerAmountSpent: 3_000_000n,
          wantAmountReceived: 3_030_000n,
          timestamp: 6n,
        },
        at(3, 0),
      ),
      logOf(
        A.queue,
        ev(abis.atomicQueueIndexedEvents, 'AtomicRequestFulfilled'),
        {
          user: bob,
          offerToken: addr(0xdead),
          wantToken: A.usdc,
          offerAmountSpent: 1n,
          wantAmountReceived: 1n,
          timestamp: 6n,
        },
        at(4, 0),
      ),
    ];
    expect(logs.map((l) => l.topics.length)).toEqual([4, 1, 1, 4]);
    const { records, unpublished } = run(logs);
    const id = `${alice}:${A.share}:${A.usdc}`;
    const red = {
      queue: A.queue,
      requestId: id,
      user: alice,
      offerToken: A.share,
      wantToken: A.usdc,
      wantDecimals: 6,
    };
    expect(records).toEqual([
      {
        family: 'redemptions',
        record: {
          ...ident(1, 0),
          ...red,
          kind: 'REQUEST',
          amount: '3000000',
          minPrice: '1010000',
          deadline: 2_000_000_000,
        },
      },
      {
        family: 'activity',
        record: {
          ...ident(1, 0),
          kind: 'REDEEM_REQUEST',
          user: alice,
          shares: '3000000',
          sharesToken: A.share,
          assets: String((3_000_000n * 1_010_000n) / 1_000_000n),
          assetsToken: A.usdc,
          assetsDecimals: 6,
        },
      },
      {
        family: 'redemptions',
        record: {
          ...ident(2, 0),
          ...red,
          kind: 'CANCEL',
          amount: '0',
          minPrice: '1010000',
          deadline: 2_000_000_000,
        },
      },
      {
        family: 'redemptions',
        record: {
          ...ident(3, 0),
          ...red,
          kind: 'FILL',
          amount: '3000000',
          minPrice: String((3_030_000n * 10n ** 6n) / 3_000_000n),
          deadline: 0,
        },
      },
    ]);
    // The fill of a share no vault has is not published.
    expect(unpublished.get('queue.AtomicRequestFulfilled')).toBe(1);
  });

  it('maps accountant rate updates with the paused state read after the block, fee claims and role updates', () => {
    const { records } = run(
      [
        logOf(
          A.accountant,
          ev(abis.accountantEvents, 'ExchangeRateUpdated'),
          { oldRate: 1_000_000n, newRate: 1_000_400n, currentTime: 77n },
          at(1, 0),
        ),
        logOf(
          A.accountant,
          ev(abis.accountantEvents, 'FeesClaimed'),
          { feeAsset: A.usdc, amount: 123_456n },
          at(2, 0),
        ),
        logOf(
          A.authority,
          ev(abis.authorityEvents, 'UserRoleUpdated'),
          { user: bob, role: 4, enabled: true },
          at(3, 0),
        ),
      ],
      true,
    );
    expect(records).toEqual([
      {
        family: 'rates',
        record: {
          ...ident(1, 0),
          accountant: A.accountant,
          rate: '1000400',
          rateDecimals: 6,
          source: 'EVENT',
          isPaused: true,
        },
      },
      {
        family: 'fees',
        record: {
          ...ident(2, 0),
          kind: 'CLAIMED',
          token: A.usdc,
          amount: '123456',
          decimals: 6,
          usdPrice: '0.9998',
        },
      },
      {
        family: 'roles',
        record: { ...ident(3, 0), authority: A.authority, user: bob, role: 4, enabled: true },
      },
    ]);
  });

  it('maps NestVault deposits, redeem requests, fills, instant redemptions with their fee, and claims', () => {
    const { records } = run([
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'Deposit'),
        { caller: alice, receiver: bob, assets: 1_000n, shares: 990n },
        at(1, 0),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'RedeemRequest'),
        { controller: alice, owner: alice, requestId: 0n, sender: alice, shares: 500n },
        at(2, 0),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'RedeemFulfilled'),
        { controller: alice, shares: 500n, assets: 505n, actualAssets: 500n },
        at(3, 0),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'Withdraw'),
        { caller: alice, receiver: alice, controller: alice, assets: 505n, shares: 500n },
        at(4, 0),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'InstantRedeem'),
        { shares: 100n, assets: 101n, postFeeAmount: 99n, receiver: bob },
        at(5, 0),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'OperatorSet'),
        { controller: alice, operator: bob, approved: true },
        at(6, 0),
      ),
    ]);
    const brief = records.map((r) => [
      r.family,
      r.record.kind,
      r.record.user ?? r.record.token,
      r.record.shares ?? r.record.amount,
      r.record.assets ?? r.record.minPrice,
    ]);
    expect(brief).toEqual([
      ['activity', 'DEPOSIT', bob, '990', '1000'],
      ['activity', 'REDEEM_REQUEST', alice, '500', '0'],
      ['redemptions', 'REQUEST', alice, '500', '0'],
      ['redemptions', 'FILL', alice, '500', String((505n * 10n ** 6n) / 500n)],
      ['fees', 'REDEMPTION', A.usdc, '5', undefined],
      ['activity', 'WITHDRAW', alice, '500', '505'],
      ['activity', 'INSTANT_REDEEM', bob, '100', '99'],
      ['fees', 'INSTANT_REDEMPTION', A.usdc, '2', undefined],
    ]);
    expect(records[2].record.deadline).toBe(NO_DEADLINE);
    expect(records[2].record.requestId).toBe(alice);
  });

  it('counts decoded events that have no family, and leaves logs of unknown shape undecoded', () => {
    const approval = logOf(
      A.share,
      ev(abis.shareEvents, 'Approval'),
      { owner: alice, spender: bob, amount: 1n },
      at(1, 0),
    );
    const setFee = logOf(
      A.nestVault,
      ev(abis.nestVaultEvents, 'SetFee'),
      { f: 2, oldFee: { rate: 0, flat: 0n }, fee: { rate: 1_500, flat: 10n ** 20n } },
      at(2, 0),
    );
    const { records, unpublished } = run([approval, setFee]);
    expect(records).toEqual([]);
    expect(unpublished.get('share.Approval')).toBe(1);
    expect(unpublished.get('nestVault.SetFee')).toBe(1);
    expect(decodeLog('nestVault', setFee)?.args).toEqual({
      f: 2,
      oldFee: { rate: 0, flat: 0n },
      fee: { rate: 1_500, flat: 10n ** 20n },
    });
    // The same Transfer topic with a topic missing is not a share Transfer.
    const bad = { ...approval, topics: [approval.topics[0], approval.topics[1]] as Hex[] };
    expect(decodeLog('share', bad)).toBeUndefined();
  });
});
