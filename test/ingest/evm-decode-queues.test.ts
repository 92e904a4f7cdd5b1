import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { NO_DEADLINE } from '../../ingest/evm/map-context.ts';
import { alice, at, bob, ident, run } from './evm-decode-support.ts';
import { A, addr, ev, logOf } from './evm-support.ts';

describe('EVM decoding and mapping', () => {
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
      // redemptions.v2: an AtomicQueue row's assets are 0 (the ERC-7540 kinds use them).
      assets: '0',
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

  it('maps NestVault deposits, redeem requests, fills, decreases, instant redemptions with their fee, and claims', () => {
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
        ev(abis.nestVaultEvents, 'RedeemUpdated'),
        { controller: alice, receiver: alice, caller: alice, oldShares: 300n, newShares: 100n },
        at(3, 1),
      ),
      logOf(
        A.nestVault,
        ev(abis.nestVaultEvents, 'Withdraw'),
        { caller: bob, receiver: alice, controller: alice, assets: 505n, shares: 500n },
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
      // ERC-7540: each event as it changes the controller's state (assets: fulfilled and claimed).
      ['redemptions', 'REDEEM_REQUEST', alice, '500', '0'],
      ['redemptions', 'REDEEM_FULFILLED', alice, '500', '500'],
      ['fees', 'REDEMPTION', A.usdc, '5', undefined],
      ['redemptions', 'REDEEM_DECREASED', alice, '200', '0'],
      // A claim by an operator (bob) is the controller's.
      ['redemptions', 'REDEEM_CLAIMED', alice, '500', '505'],
      ['activity', 'WITHDRAW', alice, '500', '505'],
      ['activity', 'INSTANT_REDEEM', bob, '100', '99'],
      ['fees', 'INSTANT_REDEMPTION', A.usdc, '2', undefined],
      // A vault-local operator approval is stored too (evm-operators-fees.test.ts).
      ['operators', undefined, undefined, undefined, undefined],
    ]);
    expect(records[2].record.deadline).toBe(NO_DEADLINE);
    expect(records[2].record.requestId).toBe(alice);
  });
});
