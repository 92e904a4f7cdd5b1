/**
 * The devnet on real anvil nodes: the same addresses on two chains, Multicall3 at
 * its canonical address, and the contract behaviours the ingester relies on
 * (shares minted at the accountant rate, the silent pause, whole queue fills and
 * expiry, the ERC-7540 request lifecycle through the registry operator, the mint
 * flow's events), each asserted on values read back from the chain.
 */
import {
  type Address,
  type BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  decodeErrorResult,
  getContractAddress,
  http,
  type Log,
  type PublicClient,
  parseEventLogs,
} from 'viem';
import type { HDAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as abis from '../../devnet/abis.ts';
import { type AnvilNode, anvilAccount, startAnvil } from '../../devnet/anvil.ts';
import {
  type DevnetAddresses,
  defaultVaultSpec,
  deployVaultSystem,
  MULTICALL3_ADDRESS,
} from '../../devnet/deploy.ts';

let plume: AnvilNode;
let eth: AnvilNode;
let addrs: DevnetAddresses;
let pub: PublicClient;
const deployer = anvilAccount(0);
const alice = anvilAccount(1);
const bob = anvilAccount(2);

/** Sends a contract write as `account` and returns the receipt's logs (throws on revert). */
async function write(
  account: HDAccount,
  address: Address,
  abi: any,
  functionName: string,
  args: unknown[] = [],
) {
  const wallet = createWalletClient({ account, transport: http(plume.rpcUrl) });
  const hash = await wallet.writeContract({ address, abi, functionName, args, chain: null } as never);
  const receipt = await pub.waitForTransactionReceipt({ hash, pollingInterval: 20 });
  expect(receipt.status, functionName).toBe('success');
  return receipt.logs as Log[];
}

const read = (address: Address, abi: any, functionName: string, args: unknown[] = []) =>
  pub.readContract({ address, abi, functionName, args } as never) as Promise<any>;

async function warp(seconds: number) {
  const test = createTestClient({ mode: 'anvil', transport: http(plume.rpcUrl) });
  await test.increaseTime({ seconds });
  await test.mine({ blocks: 1 });
}

/** Mints USDC to `who` and approves `spender`. */
async function fund(who: HDAccount, amount: bigint, spender: Address) {
  await write(who, addrs.asset, abis.mockUsdcAbi, 'mint', [who.address, amount]);
  await write(who, addrs.asset, abis.mockUsdcAbi, 'approve', [spender, amount]);
}

beforeAll(async () => {
  [plume, eth] = await Promise.all([startAnvil({ chainId: 98866 }), startAnvil({ chainId: 1 })]);
  const [a, b] = await Promise.all([
    deployVaultSystem(plume.rpcUrl, { vaults: 2 }),
    deployVaultSystem(eth.rpcUrl, { vaults: 2 }),
  ]);
  addrs = a;
  expect(b).toEqual(a);
  pub = createPublicClient({ transport: http(plume.rpcUrl) }) as PublicClient;
});

afterAll(async () => {
  await Promise.all([plume?.stop(), eth?.stop()]);
});

describe('deployVaultSystem', () => {
  it('gives every contract the same nonce-derived address on every chain', async () => {
    expect(addrs.deployer).toBe(deployer.address);
    expect(addrs.asset).toBe(getContractAddress({ from: deployer.address, nonce: 0n }));
    expect(addrs.vaults[1].share).toBe(getContractAddress({ from: deployer.address, nonce: 11n }));
    const all = [
      addrs.asset,
      addrs.operatorRegistry,
      addrs.redeemOperator,
      addrs.relayer,
      addrs.composer,
      addrs.oft,
    ];
    for (const v of addrs.vaults) all.push(...Object.values(v));
    expect(new Set(all).size).toBe(all.length);
    const ethPub = createPublicClient({ transport: http(eth.rpcUrl) });
    for (const a of all) {
      expect((await pub.getCode({ address: a }))?.length, a).toBeGreaterThan(2);
      expect(await ethPub.getCode({ address: a })).toBe(await pub.getCode({ address: a }));
    }
    expect(await read(addrs.vaults[1].share, abis.boringVaultAbi, 'symbol')).toBe(defaultVaultSpec(1).symbol);
  });

  it('serves Multicall3 aggregate3 at the canonical address (viem multicall)', async () => {
    expect(addrs.multicall3).toBe(MULTICALL3_ADDRESS);
    const res = await pub.multicall({
      multicallAddress: MULTICALL3_ADDRESS,
      contracts: [
        { address: addrs.vaults[0].accountant, abi: abis.accountantAbi, functionName: 'getRate' },
        { address: addrs.vaults[1].accountant, abi: abis.accountantAbi, functionName: 'getRate' },
        { address: addrs.vaults[0].share, abi: abis.boringVaultAbi, functionName: 'decimals' },
      ],
    });
    expect(res.map((r) => r.result)).toEqual([
      defaultVaultSpec(0).startingRate,
      defaultVaultSpec(1).startingRate,
      6,
    ]);
  });
});

describe('devnet contracts', () => {
  it('mints shares at the accountant rate through both tellers, with each family’s Deposit log', async () => {
    const v = addrs.vaults[1];
    const rate = defaultVaultSpec(1).startingRate;
    await fund(alice, 3_000_000n, v.share);
    const veda = await write(alice, v.tellerVeda, abis.tellerVedaAbi, 'deposit', [
      addrs.asset,
      1_000_000n,
      0n,
    ]);
    const nucleus = await write(alice, v.tellerNucleus, abis.tellerNucleusAbi, 'deposit', [
      addrs.asset,
      2_000_000n,
      0n,
    ]);
    const expected = (1_000_000n * 10n ** 6n) / rate + (2_000_000n * 10n ** 6n) / rate;
    expect(await read(v.share, abis.boringVaultAbi, 'balanceOf', [alice.address])).toBe(expected);
    expect(await read(v.share, abis.boringVaultAbi, 'totalSupply')).toBe(expected);
    const vedaDeposit = veda.find((l) => l.address.toLowerCase() === v.tellerVeda.toLowerCase());
    const nucleusDeposit = nucleus.find((l) => l.address.toLowerCase() === v.tellerNucleus.toLowerCase());
    expect(vedaDeposit?.topics).toHaveLength(4);
    expect(nucleusDeposit?.topics).toHaveLength(4);
    const [ev] = parseEventLogs({ abi: abis.tellerNucleusAbi, logs: nucleus, eventName: 'Deposit' });
    expect(ev.args).toMatchObject({ nonce: 0n, receiver: alice.address, depositAmount: 2_000_000n });
    expect(ev.args.shareAmount).toBe((2_000_000n * 10n ** 6n) / rate);
  });

  it('accrues the management fee in bounds and pauses silently out of bounds', async () => {
    const v = addrs.vaults[1];
    const spec = defaultVaultSpec(1);
    // The first update after deployment must wait out the minimum delay, else it pauses.
    await warp(spec.minimumUpdateDelaySeconds);
    await write(deployer, v.accountant, abis.accountantAbi, 'updateExchangeRate', [spec.startingRate]);
    const before = await read(v.accountant, abis.accountantAbi, 'accountantState');
    await warp(86_400);
    const newRate = spec.startingRate + 1_000n;
    const logs = await write(deployer, v.accountant, abis.accountantAbi, 'updateExchangeRate', [newRate]);
    const after = await read(v.accountant, abis.accountantAbi, 'accountantState');
    const dt = BigInt(after[6]) - BigInt(before[6]);
    // biome-ignore lint/complexity/useMathMinMax: bigints (Math.min takes numbers)
    const shares = before[2] < after[2] ? before[2] : after[2];
    const fee = (((shares * spec.startingRate) / 10n ** 6n) * BigInt(spec.managementFeeBps)) / 10_000n;
    expect(after[1] - before[1]).toBe((fee * dt) / (365n * 86_400n));
    expect(after[1]).toBeGreaterThan(before[1]);
    expect(after[3]).toBe(newRate);
    expect(after[7]).toBe(false);
    const [upd] = parseEventLogs({ abi: abis.accountantAbi, logs, eventName: 'ExchangeRateUpdated' });
    expect(upd.args).toMatchObject({ oldRate: spec.startingRate, newRate });

    await warp(3_600);
    const jump = (newRate * 12n) / 10n; // +20%: above the +5% bound
    const paused = await write(deployer, v.accountant, abis.accountantAbi, 'updateExchangeRate', [jump]);
    expect(parseEventLogs({ abi: abis.accountantAbi, logs: paused }).map((e) => e.eventName)).toEqual([
      'ExchangeRateUpdated',
    ]);
    const state = await read(v.accountant, abis.accountantAbi, 'accountantState');
    expect(state[7]).toBe(true);
    expect(state[3]).toBe(jump);
    expect(state[1]).toBe(after[1]);
    await expect(read(v.accountant, abis.accountantAbi, 'getRateSafe')).rejects.toThrow(/AccountantPaused/);
    const un = await write(deployer, v.accountant, abis.accountantAbi, 'unpause');
    expect(parseEventLogs({ abi: abis.accountantAbi, logs: un }).map((e) => e.eventName)).toEqual([
      'Unpaused',
    ]);
  });

  it('fills atomic requests whole and refuses an expired one; Nucleus logs carry one topic', async () => {
    const v = addrs.vaults[0];
    await fund(bob, 5_000_000n, v.share);
    await write(bob, v.tellerVeda, abis.tellerVedaAbi, 'deposit', [addrs.asset, 5_000_000n, 0n]);
    const shares = 2_000_000n;
    const price = 990_000n;
    const now = (await pub.getBlock()).timestamp;
    await write(bob, v.share, abis.boringVaultAbi, 'approve', [v.queueNucleus, shares]);
    const req = await write(bob, v.queueNucleus, abis.atomicQueueNucleusAbi, 'updateAtomicRequest', [
      v.share,
      addrs.asset,
      { deadline: now + 3_600n, atomicPrice: price, offerAmount: shares, inSolve: false },
    ]);
    expect(req[0].topics).toHaveLength(1);
    await fund(deployer, 10_000_000n, v.queueNucleus);
    const usdcBefore = await read(addrs.asset, abis.mockUsdcAbi, 'balanceOf', [bob.address]);
    const solved = await write(deployer, v.queueNucleus, abis.atomicQueueNucleusAbi, 'solve', [
      v.share,
      addrs.asset,
      [bob.address],
      '0x',
      deployer.address,
    ]);
    const [fill] = parseEventLogs({
      abi: abis.atomicQueueNucleusAbi,
      logs: solved,
      eventName: 'AtomicRequestFulfilled',
    });
    expect(fill.args).toMatchObject({
      user: bob.address,
      offerAmountSpent: shares,
      wantAmountReceived: (price * shares) / 10n ** 6n,
    });
    expect(await read(addrs.asset, abis.mockUsdcAbi, 'balanceOf', [bob.address])).toBe(
      usdcBefore + (price * shares) / 10n ** 6n,
    );
    const left = await read(v.queueNucleus, abis.atomicQueueNucleusAbi, 'getUserAtomicRequest', [
      bob.address,
      v.share,
      addrs.asset,
    ]);
    expect(left.offerAmount).toBe(0n);

    const t = (await pub.getBlock()).timestamp;
    await write(bob, v.share, abis.boringVaultAbi, 'approve', [v.queueVeda, shares]);
    const vreq = await write(bob, v.queueVeda, abis.atomicQueueVedaAbi, 'updateAtomicRequest', [
      v.share,
      addrs.asset,
      { deadline: t + 60n, atomicPrice: price, offerAmount: shares, inSolve: false },
    ]);
    expect(vreq[0].topics).toHaveLength(4);
    await warp(120);
    await expect(
      pub.simulateContract({
        address: v.queueVeda,
        abi: abis.atomicQueueVedaAbi,
        functionName: 'solve',
        args: [v.share, addrs.asset, [bob.address], '0x', deployer.address],
        account: deployer.address,
      }),
    ).rejects.toThrow(/RequestDeadlineExceeded/);
  });

  it('runs the ERC-7540 lifecycle and lets the registry operator claim for the controller', async () => {
    const v = addrs.vaults[0];
    await fund(alice, 4_000_000n, v.nestVault);
    const dep = await write(alice, v.nestVault, abis.nestVaultAbi, 'deposit', [4_000_000n, alice.address]);
    const rate = await read(v.accountant, abis.accountantAbi, 'getRate');
    const shares = (4_000_000n * 10n ** 6n) / rate;
    const [d] = parseEventLogs({ abi: abis.nestVaultAbi, logs: dep, eventName: 'Deposit' });
    expect(d.args).toEqual({ caller: alice.address, receiver: alice.address, assets: 4_000_000n, shares });

    await write(alice, v.share, abis.boringVaultAbi, 'approve', [v.nestVault, shares]);
    await write(alice, v.nestVault, abis.nestVaultAbi, 'requestRedeem', [
      shares,
      alice.address,
      alice.address,
    ]);
    expect(await read(v.nestVault, abis.nestVaultAbi, 'pendingRedeemRequest', [0n, alice.address])).toBe(
      shares,
    );
    await write(deployer, v.nestVault, abis.nestVaultAbi, 'fulfillRedeem', [alice.address, shares]);
    expect(await read(v.nestVault, abis.nestVaultAbi, 'claimableRedeemRequest', [0n, alice.address])).toBe(
      shares,
    );

    // Not yet an operator: the keeper's claim reverts with the vault's error, bubbled up.
    const refused = await pub
      .simulateContract({
        address: addrs.redeemOperator,
        abi: abis.redeemOperatorAbi,
        functionName: 'redeem',
        args: [v.nestVault, alice.address, shares],
        account: deployer.address,
      })
      .then(
        () => undefined,
        (err: BaseError) =>
          err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError,
      );
    expect(refused?.raw && decodeErrorResult({ abi: abis.nestVaultAbi, data: refused.raw })).toMatchObject({
      errorName: 'NotOperator',
      args: [addrs.redeemOperator, alice.address],
    });
    await write(alice, addrs.operatorRegistry, abis.operatorRegistryAbi, 'setOperator', [
      addrs.redeemOperator,
      true,
    ]);
    const usdc = await read(addrs.asset, abis.mockUsdcAbi, 'balanceOf', [alice.address]);
    const claimed = await write(deployer, addrs.redeemOperator, abis.redeemOperatorAbi, 'redeem', [
      v.nestVault,
      alice.address,
      shares,
    ]);
    const [w] = parseEventLogs({ abi: abis.nestVaultAbi, logs: claimed, eventName: 'Withdraw' });
    const assets = (shares * rate) / 10n ** 6n;
    expect(w.args).toEqual({
      caller: addrs.redeemOperator,
      receiver: alice.address,
      controller: alice.address,
      assets,
      shares,
    });
    expect(await read(addrs.asset, abis.mockUsdcAbi, 'balanceOf', [alice.address])).toBe(usdc + assets);
  });

  it('emits the mint flow: relayer hook, composer deposit and send, share OFT send', async () => {
    const nonce = `0x${'ab'.repeat(32)}` as const;
    const recipient = `0x${'cd'.repeat(32)}` as const;
    const logs = await write(deployer, addrs.relayer, abis.relayerAbi, 'relay', [
      nonce,
      7_000_000n,
      30168,
      recipient,
      false,
    ]);
    const rate = await read(addrs.vaults[0].accountant, abis.accountantAbi, 'getRate');
    const shares = (7_000_000n * 10n ** 6n) / rate;
    const composer = parseEventLogs({ abi: abis.composerAbi, logs });
    const deposited = composer.find((e) => e.eventName === 'Deposited');
    expect(deposited?.args).toEqual({
      sender: recipient,
      recipient,
      dstEid: 30168,
      assetAmt: 7_000_000n,
      shareAmt: shares,
    });
    const [sent] = parseEventLogs({ abi: abis.shareOftAbi, logs, eventName: 'OFTSent' });
    expect(sent.args).toMatchObject({ dstEid: 30168, fromAddress: addrs.composer, amountSentLD: shares });
    expect(composer.find((e) => e.eventName === 'Sent')?.args).toEqual({ guid: sent.args.guid });
    expect(parseEventLogs({ abi: abis.relayerAbi, logs, eventName: 'HookRelayed' })[0].args).toEqual({
      nonce,
    });
    expect(await read(addrs.vaults[0].share, abis.boringVaultAbi, 'balanceOf', [addrs.oft])).toBe(shares);

    const refund = await write(deployer, addrs.relayer, abis.relayerAbi, 'relay', [
      nonce,
      1n,
      30168,
      recipient,
      true,
    ]);
    expect(parseEventLogs({ abi: abis.relayerAbi, logs: refund }).map((e) => e.eventName)).toEqual([
      'HookFailed',
      'Refunded',
    ]);
  });

  it('rejects a self-operator on the registry', async () => {
    await expect(
      pub.simulateContract({
        address: addrs.operatorRegistry,
        abi: abis.operatorRegistryAbi,
        functionName: 'setOperator',
        args: [alice.address, true],
        account: alice.address,
      }),
    ).rejects.toThrow(/CannotSetSelfAsOperator/);
  });
});
