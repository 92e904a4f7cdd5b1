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
}

/** What a vault starts with. Rates are in the base asset's 6 decimals, bounds and fees in bps. */
export interface VaultSpec {
  name: string;
  symbol: string;
  startingRate: bigint;
  upperBps: number;
  lowerBps: number;
  minimumUpdateDelaySeconds: number;
  managementFeeBps: number;
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
  };
}

/** Nest's KEEPER role id (reference section 7). */
const KEEPER_ROLE = 14;

async function deployVault(
  tx: Sender,
  spec: VaultSpec,
  g: { asset: Address; operatorRegistry: Address; payout: Address },
): Promise<VaultAddresses> {
  const share = await tx.deploy('BoringVault', [spec.name, spec.symbol, 6]);
  const accountant = await tx.deploy('Accountant', [
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
