/**
 * Deploys the devnet's contracts for N vaults. The same deployer key sends the same
 * transactions in the same order on every chain from nonce 0, so every contract has
 * the same address on every chain (like the CREATE2 deployments of the real vaults).
 * Multicall3 is placed at its canonical address with `anvil_setCode`.
 */
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  type Hex,
  type HttpTransport,
  http,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { VaultstreamError } from '../core/errors.ts';
import { DEPLOYER_KEY } from './anvil.ts';
import { type CompiledContracts, compileContracts } from './compile.ts';
import type { ContractName } from './contracts.ts';
import { waitMined } from './sim/chain.ts';

export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** One vault's contracts. */
export interface VaultAddresses {
  /** BoringVault share token. */
  share: Address;
  accountant: Address;
  tellerVeda: Address;
  tellerNucleus: Address;
  queueVeda: Address;
  queueNucleus: Address;
  authority: Address;
  /** NestVault (ERC-7540) over the share. */
  nestVault: Address;
}

/** Every devnet contract; the same on every chain. */
export interface DevnetAddresses {
  deployer: Address;
  /** USDC stand-in (6 decimals): the base and deposit asset of every vault. */
  asset: Address;
  operatorRegistry: Address;
  /** RedeemOperator keeper contract (the auto-claim operator). */
  redeemOperator: Address;
  /** Mint flow (vault 0): CCTP relayer, composer, share OFT adapter. */
  relayer: Address;
  composer: Address;
  oft: Address;
  multicall3: Address;
  vaults: VaultAddresses[];
  /** Yield assets the vaults' strategist buys with the vaults' USDC (composition), in YIELD_ASSETS order. */
  yieldAssets: YieldAssetAddresses[];
}

/** A yield asset: a BoringVault share with its own legacy accountant and Veda teller, and for
 * aggregator-priced ones a Chainlink-style feed the simulator posts the same price to. */
export interface YieldAssetAddresses {
  slug: string;
  share: Address;
  accountant: Address;
  teller: Address;
  /** The zero address when the asset is priced by its accountant rate. */
  aggregator: Address;
}

/** A yield asset's starting rate (6 decimals, USD), yearly drift of its daily raises and its price source. */
export interface YieldAssetSpec {
  slug: string;
  name: string;
  symbol: string;
  startingRate: bigint;
  /** Mean yearly growth of the rate, bps (each day's raise is drawn around it). */
  aprBps: number;
  price: 'rate' | 'aggregator';
}

/** Decimals of the devnet's aggregator answers (Chainlink USD feeds use 8). */
export const AGGREGATOR_DECIMALS = 8;

export const YIELD_ASSETS: YieldAssetSpec[] = [
  {
    slug: 'ytbill',
    name: 'Devnet T-Bill Vault',
    symbol: 'yTBILL',
    startingRate: 1_000_000n,
    aprBps: 450,
    price: 'rate',
  },
  {
    slug: 'ycredit',
    name: 'Devnet Credit Vault',
    symbol: 'yCREDIT',
    startingRate: 1_020_000n,
    aprBps: 1_100,
    price: 'aggregator',
  },
];

/** What a vault starts with. Rates are in the base asset's 6 decimals, bounds and fees in bps. */
export interface VaultSpec {
  name: string;
  symbol: string;
  startingRate: bigint;
  upperBps: number;
  lowerBps: number;
  minimumUpdateDelaySeconds: number;
  managementFeeBps: number;
  /** `hub`: a NestHubAccountant (bounds and fees in 1e6 = 100%: `upperBps`/`lowerBps` are then 1e6-scaled,
   * `managementFeeBps` too, plus `performanceFee`); default the legacy accountant. */
  accountant?: 'legacy' | 'hub';
  performanceFee?: number;
}

export interface DeployOptions {
  /** A count (default specs) or the specs themselves. */
  vaults: number | VaultSpec[];
  /** Default: the anvil deployer key. */
  deployerKey?: Hex;
  /** Default: compileContracts(). */
  compiled?: CompiledContracts;
}

/** Default spec of the i-th vault: rate 1.0 + i%, bounds ±5%, hourly updates, 1% management fee. */
export function defaultVaultSpec(i: number): VaultSpec {
  // Vault 2 has a Nest hub accountant: ±5%, hourly, 1% management and 10% performance fee (1e6 scale).
  if (i === 2)
    return {
      name: `Devnet Vault ${i}`,
      symbol: `nDEV${i}`,
      startingRate: 1_000_000n + BigInt(i) * 10_000n,
      upperBps: 1_050_000,
      lowerBps: 950_000,
      minimumUpdateDelaySeconds: 3_600,
      managementFeeBps: 10_000,
      accountant: 'hub',
      performanceFee: 100_000,
    };
  return {
    name: `Devnet Vault ${i}`,
    symbol: `nDEV${i}`,
    startingRate: 1_000_000n + BigInt(i) * 10_000n,
    upperBps: 10_500,
    lowerBps: 9_500,
    minimumUpdateDelaySeconds: 3_600,
    managementFeeBps: 100,
  };
}

/** Sends transactions from one account with explicit nonces, then waits for them all. */
class Sender {
  private nonce = 0;
  private readonly hashes: Hex[] = [];
  private readonly wallet: WalletClient;
  constructor(
    private readonly account: PrivateKeyAccount,
    transport: HttpTransport,
    private readonly publicClient: PublicClient,
    private readonly compiled: CompiledContracts,
  ) {
    this.wallet = createWalletClient({ account, transport });
  }

  compiledAbi = (name: ContractName): Abi => this.compiled[name].abi as Abi;

  async start(): Promise<void> {
    const { address } = this.account;
    this.nonce = await this.publicClient.getTransactionCount({ address });
    if (this.nonce !== 0)
      throw new VaultstreamError(
        'BAD_INPUT',
        `deployer ${address} has nonce ${this.nonce}; need a fresh chain`,
      );
  }

  /** Sends a deployment and returns the address it will have (sender + nonce). */
  async deploy(name: ContractName, args: unknown[] = []): Promise<Address> {
    const { abi, bytecode } = this.compiled[name];
    const data = encodeDeployData({ abi, bytecode, args });
    const nonce = this.nonce;
    await this.send({ data });
    return getContractAddress({ from: this.account.address, nonce: BigInt(nonce) });
  }

  async call(to: Address, abi: Abi, functionName: string, args: unknown[]): Promise<void> {
    await this.send({ to, data: encodeFunctionData({ abi, functionName, args }) });
  }

  private async send(tx: { to?: Address; data: Hex }): Promise<void> {
    const hash = await this.wallet.sendTransaction({
      ...tx,
      account: this.account,
      chain: null,
      nonce: this.nonce++,
      gas: 6_000_000n,
    });
    this.hashes.push(hash);
  }

  /** Waits for every sent transaction; any revert is a deployment failure. */
  async settle(): Promise<void> {
    for (const hash of this.hashes) {
      const r = await waitMined(this.publicClient, hash, 'devnet deployment');
      if (r.status !== 'success')
        throw new VaultstreamError('INTERNAL', `devnet deployment transaction ${hash} reverted`);
    }
  }
}

/**
 * Deploys every contract on the chain at `rpcUrl` (a fresh chain: the deployer's
 * nonce must be 0) and wires them: tellers and the NestVault may enter/exit the
 * share, the relayer may call the composer, the RedeemOperator holds the KEEPER
 * role (14) on every vault's authority. Returns the addresses, which are the same
 * on every chain deployed this way with the same options.
 */
export async function deployVaultSystem(rpcUrl: string, opts: DeployOptions): Promise<DevnetAddresses> {
  const compiled = opts.compiled ?? compileContracts();
  const account = privateKeyToAccount(opts.deployerKey ?? DEPLOYER_KEY);
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ transport });
  const specs =
    typeof opts.vaults === 'number'
      ? Array.from({ length: opts.vaults }, (_, i) => defaultVaultSpec(i))
      : opts.vaults;
  if (specs.length === 0)
    throw new VaultstreamError('BAD_INPUT', 'deployVaultSystem needs at least one vault');

  const tx = new Sender(account, transport, publicClient, compiled);
  await tx.start();
  const asset = await tx.deploy('MockUSDC');
  const operatorRegistry = await tx.deploy('OperatorRegistry');
  const redeemOperator = await tx.deploy('RedeemOperator');
  const vaults: VaultAddresses[] = [];
  for (const spec of specs)
    vaults.push(await deployVault(tx, spec, { asset, operatorRegistry, payout: account.address }));
  const oft = await tx.deploy('ShareOFT', [vaults[0].share]);
  const composer = await tx.deploy('Composer', [vaults[0].nestVault, oft]);
  const relayer = await tx.deploy('Relayer', [composer]);
  await tx.call(composer, compiled.Composer.abi, 'setAuthorized', [relayer, true]);
  for (const v of vaults) {
    for (const who of [v.tellerVeda, v.tellerNucleus, v.nestVault])
      await tx.call(v.share, compiled.BoringVault.abi, 'setAuthorized', [who, true]);
    await tx.call(v.nestVault, compiled.NestVault.abi, 'setAuthorized', [redeemOperator, true]);
    await tx.call(v.authority, compiled.RolesAuthority.abi, 'setUserRole', [
      redeemOperator,
      KEEPER_ROLE,
      true,
    ]);
  }
  const yieldAssets: YieldAssetAddresses[] = [];
  for (const y of YIELD_ASSETS)
    yieldAssets.push(await deployYieldAsset(tx, y, asset, account.address, vaults));
  await tx.settle();
  await createTestClient({ mode: 'anvil', transport }).setCode({
    address: MULTICALL3_ADDRESS,
    bytecode: compiled.Multicall3.deployedBytecode,
  });
  return {
    deployer: account.address,
    asset,
    operatorRegistry,
    redeemOperator,
    relayer,
    composer,
    oft,
    multicall3: MULTICALL3_ADDRESS,
    vaults,
    yieldAssets,
  };
}

/** Nest's KEEPER role id. */
const KEEPER_ROLE = 14;

async function deployVault(
  tx: Sender,
  spec: VaultSpec,
  g: { asset: Address; operatorRegistry: Address; payout: Address },
): Promise<VaultAddresses> {
  const share = await tx.deploy('BoringVault', [spec.name, spec.symbol, 6]);
  const accountant =
    spec.accountant === 'hub'
      ? await tx.deploy('NestHubAccountant', [
          share,
          g.asset,
          g.payout,
          spec.startingRate,
          spec.upperBps,
          spec.lowerBps,
          spec.minimumUpdateDelaySeconds,
          spec.managementFeeBps,
          spec.performanceFee ?? 0,
        ])
      : await tx.deploy('Accountant', [
          share,
          g.asset,
          g.payout,
          spec.startingRate,
          spec.upperBps,
          spec.lowerBps,
          spec.minimumUpdateDelaySeconds,
          spec.managementFeeBps,
        ]);
  const tellerVeda = await tx.deploy('TellerVeda', [share, accountant]);
  const tellerNucleus = await tx.deploy('TellerNucleus', [share, accountant]);
  const queueVeda = await tx.deploy('AtomicQueueVeda');
  const queueNucleus = await tx.deploy('AtomicQueueNucleus');
  const authority = await tx.deploy('RolesAuthority');
  const nestVault = await tx.deploy('NestVault', [share, g.asset, accountant, g.operatorRegistry]);
  return { share, accountant, tellerVeda, tellerNucleus, queueVeda, queueNucleus, authority, nestVault };
}

/** A yield asset: share, accountant (no fee), teller (the vaults may bulkWithdraw), optional feed. */
async function deployYieldAsset(
  tx: Sender,
  y: YieldAssetSpec,
  asset: Address,
  payout: Address,
  vaults: VaultAddresses[],
): Promise<YieldAssetAddresses> {
  const share = await tx.deploy('BoringVault', [y.name, y.symbol, 6]);
  const accountant = await tx.deploy('Accountant', [
    share,
    asset,
    payout,
    y.startingRate,
    10_500,
    9_500,
    3_600,
    0,
  ]);
  const teller = await tx.deploy('TellerVeda', [share, accountant]);
  const aggregator =
    y.price === 'aggregator'
      ? await tx.deploy('MockAggregator', [
          AGGREGATOR_DECIMALS,
          `${y.symbol} / USD`,
          y.startingRate * 10n ** BigInt(AGGREGATOR_DECIMALS - 6),
        ])
      : ('0x0000000000000000000000000000000000000000' as Address);
  const compiled = tx.compiledAbi;
  await tx.call(share, compiled('BoringVault'), 'setAuthorized', [teller, true]);
  for (const v of vaults) await tx.call(teller, compiled('TellerVeda'), 'setAuthorized', [v.share, true]);
  return { slug: y.slug, share, accountant, teller, aggregator };
}

/**
 * The registry fields of vault `i` that come from its accountant kind and the yield assets: hub
 * flags, `targetComposition` (one item per yield asset) and `yieldAssets` (held on every chain,
 * priced on the primary chain by the asset's accountant rate or its aggregator).
 */
export function vaultRegistryExtras(spec: VaultSpec, a: DevnetAddresses, chainIds: number[]) {
  const hub = spec.accountant === 'hub';
  return {
    isHubAccountant: hub,
    targetComposition: a.yieldAssets.map((y, k) => ({
      slug: y.slug,
      name: YIELD_ASSETS[k]?.name ?? y.slug,
      description: `${YIELD_ASSETS[k]?.symbol ?? y.slug} (devnet yield asset)`,
      image: '',
    })),
    yieldAssets: a.yieldAssets.map((y, k) => ({
      slug: y.slug,
      symbol: YIELD_ASSETS[k]?.symbol ?? y.slug,
      decimals: 6,
      holdings: chainIds.map((chainId) => ({ chainId, contractAddress: y.share })),
      price:
        y.aggregator === '0x0000000000000000000000000000000000000000'
          ? { kind: 'rate' as const, chainId: chainIds[0], address: y.accountant, decimals: 6 }
          : {
              kind: 'aggregator' as const,
              chainId: chainIds[0],
              address: y.aggregator,
              decimals: AGGREGATOR_DECIMALS,
            },
    })),
  };
}
