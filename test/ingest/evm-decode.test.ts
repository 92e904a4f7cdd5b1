/**
 * Decoding and mapping of every event variant the EVM ingester reads: logs built
 * with viem's encoders, decoded by role, mapped to records, and each record checked
 * field by field and through its family's schema and Avro encoding.
 */
import type { Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import * as abis from '../../ingest/evm/abis.ts';
import { decodeLog } from '../../ingest/evm/decode.ts';
import { alice, at, bob, ident, run, ZERO } from './evm-decode-support.ts';
import { A, blockHash, ev, logOf } from './evm-support.ts';

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
        record: {
          ...ident(1, 0),
          token: A.share,
          from: alice,
          to: bob,
          amount: '12345678901234567890',
          transactionIndex: -1,
        },
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
    const added = logOf(A.teller, ev(abis.tellerNucleusEvents, 'AssetAdded'), { asset: A.usdt }, at(3, 0));
    const { records, unpublished } = run([approval, setFee, added]);
    // SetFee is stored as a fee-rate setting (evm-operators-fees.test.ts); the others have no family.
    expect(records.map((r) => r.family)).toEqual(['fee_rates']);
    expect(unpublished.get('share.Approval')).toBe(1);
    expect(unpublished.get('teller.AssetAdded')).toBe(1);
    expect(unpublished.has('nestVault.SetFee')).toBe(false);
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
