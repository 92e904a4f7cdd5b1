/**
 * End to end on the devnet: the project's contracts deployed on anvil and driven
 * through every user and operator action (test/ingest/evm-e2e-devnet.ts); then the
 * ingester runs into the in-process
 * bus and every family is compared with what the chain says, decoded independently
 * with the devnet's compiler-generated ABIs or computed with the contracts' formulas.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Abi, createPublicClient, type Hex, http, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { silentLogger } from '../../core/log.ts';
import * as dv from '../../devnet/abis.ts';
import { type AnvilNode, startAnvil } from '../../devnet/anvil.ts';
import type { DevnetAddresses } from '../../devnet/deploy.ts';
import { startEvmIngest } from '../../ingest/evm/index.ts';
import { EventCodec } from '../../schemas/codec.ts';
import { alice, type DevnetRun, driveDevnet } from './evm-e2e-devnet.ts';
import {
  anvilRpc,
  liveEvents,
  localChain,
  openBus,
  readFamily,
  untilCaughtUp,
  usdcVault,
} from './evm-support.ts';

let node: AnvilNode;
let d: DevnetAddresses;
let receipts: DevnetRun['receipts'];
const root = mkdtempSync(join(tmpdir(), 'vs-evm-e2e-'));
const lc = (a: string) => a.toLowerCase();

beforeAll(async () => {
  // Genesis at 01:00 UTC today: the run's ~4 h of time travel never crosses a UTC midnight, so no
  // day-close snapshot adds READ rates whatever the wall clock says.
  node = await startAnvil({
    chainId: 31337,
    timestamp: Math.floor(Date.now() / 86_400_000) * 86_400 + 3_600,
  });
  ({ d, receipts } = await driveDevnet(node.rpcUrl));
}, 120_000);
afterAll(async () => {
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

const pick = (r: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, r[k]]));

describe('EVM ingest end to end on the devnet', () => {
  it('publishes every event family exactly as the chain has it', async () => {
    const [v0, v1] = d.vaults;
    const vault = (slug: string, v: typeof v0, teller: Hex) =>
      usdcVault({ slug, name: slug, ...v, teller, usdc: d.asset });
    const config = parseConfig({
      dataDir: root,
      chains: [
        localChain({
          name: 'devnet',
          rpcUrls: [node.rpcUrl],
          confirmations: 2,
          maxBlockRange: 1000,
          atomicQueues: [v0.queueVeda, v0.queueNucleus],
        }),
      ],
      vaults: [vault('v0', v0, v0.tellerVeda), vault('v1', v1, v1.tellerNucleus)],
    });
    const bus = await openBus(join(root, 'bus'));
    const pub = createPublicClient({ transport: http(node.rpcUrl) });
    const head = Number(await pub.getBlockNumber());
    // Two confirmations: two more blocks let the follower ingest up to `head`.
    await anvilRpc(node.rpcUrl, 'anvil_mine', ['0x2']);
    const ingest = startEvmIngest({ config, bus, codec: new EventCodec(), log: silentLogger });
    await untilCaughtUp(ingest, head, 30_000, 'the ingester');
    await ingest.stop();
    const read = async (f: Parameters<typeof readFamily>[2]) =>
      liveEvents(
        await readFamily(bus, config.topicPrefix, f),
        (r) => `${r.vault}:${r.blockHash}:${r.logIndex}`,
      ).sort(
        (a, b) =>
          (a.blockNumber as number) - (b.blockNumber as number) ||
          (a.logIndex as number) - (b.logIndex as number),
      );
    const tx = (name: string) => receipts[name].transactionHash;
    const logOf = (name: string, abi: Abi, eventName: string) =>
      parseEventLogs({ abi, logs: receipts[name].logs, eventName } as never)[0] as unknown as {
        args: Record<string, bigint>;
        logIndex: number;
      };

    // Transfers: every share Transfer on the chain, decoded with the devnet ABI.
    const shareLogs = await pub.getContractEvents({
      address: [v0.share, v1.share],
      abi: dv.boringVaultAbi,
      eventName: 'Transfer',
      fromBlock: 0n,
    });
    const transfers = await read('transfers');
    expect(transfers.map((r) => pick(r, ['vault', 'txHash', 'logIndex', 'from', 'to', 'amount']))).toEqual(
      shareLogs.map((l) => ({
        vault: lc(l.address) === lc(v0.share) ? 'v0' : 'v1',
        txHash: l.transactionHash,
        logIndex: l.logIndex,
        from: lc(l.args.from as string),
        to: lc(l.args.to as string),
        amount: (l.args.amount as bigint).toString(),
      })),
    );

    // Activity, in chain order.
    const veda = logOf('depositVeda', dv.tellerVedaAbi, 'Deposit');
    expect(veda.args.shareAmount).toBe((100_000_000n * 10n ** 6n) / 1_000_000n);
    const nucleus = logOf('depositNucleus', dv.tellerNucleusAbi, 'Deposit');
    expect(nucleus.args.shareAmount).toBe((50_000_000n * 10n ** 6n) / 1_010_000n);
    const nestShares = logOf('nestDeposit', dv.nestVaultAbi, 'Deposit').args.shares;
    const usdc = lc(d.asset);
    const act = (
      vaultSlug: string,
      kind: string,
      user: string,
      shares: bigint,
      assets: bigint,
      name: string,
      assetsToken = usdc,
    ) => ({
      vault: vaultSlug,
      kind,
      user: lc(user),
      shares: shares.toString(),
      assets: assets.toString(),
      assetsToken,
      txHash: tx(name),
    });
    const activity = await read('activity');
    expect(
      activity.map((r) => pick(r, ['vault', 'kind', 'user', 'shares', 'assets', 'assetsToken', 'txHash'])),
    ).toEqual([
      act('v0', 'DEPOSIT', alice.address, veda.args.shareAmount, 100_000_000n, 'depositVeda'),
      act('v1', 'DEPOSIT', alice.address, nucleus.args.shareAmount, 50_000_000n, 'depositNucleus'),
      act('v0', 'DEPOSIT', alice.address, nestShares, 30_000_000n, 'nestDeposit'),
      act('v0', 'REDEEM_REQUEST', alice.address, 10_000_000n, 0n, 'nestRequest'),
      act('v0', 'WITHDRAW', alice.address, 10_000_000n, 10_000_000n, 'nestClaim'),
      act(
        'v0',
        'REDEEM_REQUEST',
        alice.address,
        20_000_000n,
        (20_000_000n * 1_000_500n) / 10n ** 6n,
        'request',
      ),
      act(
        'v1',
        'REDEEM_REQUEST',
        alice.address,
        5_000_000n,
        (5_000_000n * 1_000_500n) / 10n ** 6n,
        'request1',
      ),
    ]);
    expect(new Set(activity.map((r) => r.assetsDecimals))).toEqual(new Set([6]));

    // Rates: the three updates (the last paused without an event) and the READ at the snapshot.
    const rates = await read('rates');
    expect(
      rates.filter((r) => r.source === 'EVENT').map((r) => pick(r, ['vault', 'rate', 'isPaused', 'txHash'])),
    ).toEqual([
      { vault: 'v0', rate: '1001000', isPaused: false, txHash: tx('rate1') },
      { vault: 'v0', rate: '1002000', isPaused: false, txHash: tx('rate2') },
      { vault: 'v0', rate: '2000000', isPaused: true, txHash: tx('ratePaused') },
    ]);
    expect(
      rates
        .filter((r) => r.source === 'READ')
        .map((r) => pick(r, ['vault', 'rate', 'isPaused', 'blockNumber'])),
    ).toEqual([
      { vault: 'v0', rate: '2000000', isPaused: true, blockNumber: head },
      { vault: 'v1', rate: '1010000', isPaused: false, blockNumber: head },
    ]);

    // Fees: the accrual of the second update (the accountant's formula), its claim.
    const at = async (name: string) => {
      const n = receipts[name].blockNumber;
      const block = await pub.getBlock({ blockNumber: n });
      const supply = await pub.readContract({
        address: v0.share,
        abi: dv.boringVaultAbi,
        functionName: 'totalSupply',
        blockNumber: n,
      });
      return { time: block.timestamp, supply: supply as bigint };
    };
    const [u1, u2] = [await at('rate1'), await at('rate2')];
    // biome-ignore lint/complexity/useMathMinMax: Math.min does not take bigints
    const shares = u1.supply < u2.supply ? u1.supply : u2.supply;
    const accrued =
      (((((shares * 1_001_000n) / 10n ** 6n) * 100n) / 10_000n) * (u2.time - u1.time)) / (365n * 86_400n);
    expect(accrued).toBeGreaterThan(0n);
    const fees = await read('fees');
    expect(
      fees.map((r) => pick(r, ['vault', 'kind', 'token', 'amount', 'decimals', 'usdPrice', 'txHash'])),
    ).toEqual([
      {
        vault: 'v0',
        kind: 'MANAGEMENT',
        token: usdc,
        amount: accrued.toString(),
        decimals: 6,
        usdPrice: '1',
        txHash: tx('rate2'),
      },
      {
        vault: 'v0',
        kind: 'CLAIMED',
        token: usdc,
        amount: accrued.toString(),
        decimals: 6,
        usdPrice: '0.9998',
        txHash: tx('claim'),
      },
    ]);

    // Roles: the deployment's KEEPER grants to the redeem operator, then bob's grant.
    const roleLogs = await pub.getContractEvents({
      address: [v0.authority, v1.authority],
      abi: dv.rolesAuthorityAbi,
      eventName: 'UserRoleUpdated',
      fromBlock: 0n,
    });
    expect(roleLogs).toHaveLength(3);
    const roles = await read('roles');
    expect(roles.map((r) => pick(r, ['vault', 'authority', 'user', 'role', 'enabled', 'txHash']))).toEqual(
      roleLogs.map((l) => ({
        vault: lc(l.address) === lc(v0.authority) ? 'v0' : 'v1',
        authority: lc(l.address),
        user: lc(l.args.user as string),
        role: Number(l.args.role),
        enabled: l.args.enabled,
        txHash: l.transactionHash,
      })),
    );
    expect(roles.at(-1)?.txHash).toBe(tx('role'));

    // Redemptions: NestVault request, fill and claim; AtomicQueue request, request+cancel (Nucleus), fill (Veda).
    const redemptions = await read('redemptions');
    const qid = (share: Hex) => `${lc(alice.address)}:${lc(share)}:${usdc}`;
    expect(
      redemptions.map((r) =>
        pick(r, ['vault', 'queue', 'kind', 'requestId', 'amount', 'minPrice', 'assets', 'txHash']),
      ),
    ).toEqual([
      {
        vault: 'v0',
        queue: lc(v0.nestVault),
        kind: 'REDEEM_REQUEST',
        requestId: lc(alice.address),
        amount: '10000000',
        minPrice: '0',
        assets: '0',
        txHash: tx('nestRequest'),
      },
      {
        vault: 'v0',
        queue: lc(v0.nestVault),
        kind: 'REDEEM_FULFILLED',
        requestId: lc(alice.address),
        amount: '10000000',
        minPrice: '0',
        assets: '10000000',
        txHash: tx('nestFulfill'),
      },
      {
        vault: 'v0',
        queue: lc(v0.nestVault),
        kind: 'REDEEM_CLAIMED',
        requestId: lc(alice.address),
        amount: '10000000',
        minPrice: '0',
        assets: '10000000',
        txHash: tx('nestClaim'),
      },
      {
        vault: 'v0',
        queue: lc(v0.queueVeda),
        kind: 'REQUEST',
        requestId: qid(v0.share),
        amount: '20000000',
        minPrice: '1000500',
        assets: '0',
        txHash: tx('request'),
      },
      {
        vault: 'v1',
        queue: lc(v0.queueNucleus),
        kind: 'REQUEST',
        requestId: qid(v1.share),
        amount: '5000000',
        minPrice: '1000500',
        assets: '0',
        txHash: tx('request1'),
      },
      {
        vault: 'v1',
        queue: lc(v0.queueNucleus),
        kind: 'CANCEL',
        requestId: qid(v1.share),
        amount: '0',
        minPrice: '1000500',
        assets: '0',
        txHash: tx('cancel1'),
      },
      {
        vault: 'v0',
        queue: lc(v0.queueVeda),
        kind: 'FILL',
        requestId: qid(v0.share),
        amount: '20000000',
        minPrice: '1000500',
        assets: '0',
        txHash: tx('solve'),
      },
    ]);

    // Snapshots at the head: supply, accountant state, liquid USDC held by each vault.
    const snapshots = await readFamily(bus, config.topicPrefix, 'snapshots');
    const read0 = (address: Hex, abi: Abi, functionName: string, args: unknown[] = []) =>
      pub.readContract({
        address,
        abi,
        functionName,
        args,
        blockNumber: BigInt(head),
      } as never) as Promise<bigint>;
    const expectedSnapshots = [];
    for (const [slug, v, rate, paused] of [
      ['v0', v0, 2_000_000n, true],
      ['v1', v1, 1_010_000n, false],
    ] as const)
      expectedSnapshots.push(
        {
          vault: slug,
          kind: 'SUPPLY',
          token: lc(v.share),
          amount: String(await read0(v.share, dv.boringVaultAbi, 'totalSupply')),
          isPaused: false,
        },
        {
          vault: slug,
          kind: 'ACCOUNTANT',
          token: lc(v.accountant),
          amount: rate.toString(),
          isPaused: paused,
        },
        {
          vault: slug,
          kind: 'ASSET_BALANCE',
          token: usdc,
          amount: String(await read0(d.asset, dv.mockUsdcAbi, 'balanceOf', [v.share])),
          isPaused: false,
        },
      );
    expect(snapshots.map((s) => pick(s, ['vault', 'kind', 'token', 'amount', 'isPaused']))).toEqual(
      expectedSnapshots,
    );
    expect(new Set(snapshots.map((s) => s.blockNumber))).toEqual(new Set([head]));

    const blocks = await read('blocks');
    // The reorg window (64) below the head is read whole; deeper, only the blocks a range needed
    // (range-headers.ts): its first, and those holding events.
    const numbers = blocks.map((b) => b.blockNumber as number);
    expect(numbers.filter((n) => n > head - 64)).toEqual(Array.from({ length: 64 }, (_, k) => head - 63 + k));
    for (const f of ['transfers', 'activity'] as const)
      for (const r of await read(f)) expect(numbers, `${f} block`).toContain(r.blockNumber);
    expect(numbers[0]).toBe(0);
    expect(await readFamily(bus, config.topicPrefix, 'source_errors')).toEqual([]);
    await bus.close();
  }, 120_000);
});
