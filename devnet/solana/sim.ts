/**
 * The simulator's Solana side: the LiteSVM chain, its JSON-RPC, the mint flow's
 * service stand-ins, and what the simulator does there: a mint flow's burn (USDC
 * burnt with a hook to vault 0's composer), its Iris attestation, the Predicate
 * verdict, the LayerZero delivery and the share mint on Solana, plus transfers of
 * the share between Solana holders. Booked independently of the SVM, in the ground
 * truth's `solana` section.
 */
import type { KeyPairSigner } from '@solana/kit';
import { encodeAbiParameters, type Hex } from 'viem';
import { MINT_STEPS } from '../../schemas/families.ts';
import { type DevnetServices, startServices } from '../services/index.ts';
import { Rng } from '../sim/rng.ts';
import type { MintFlowTruth, SolanaTruthJson } from '../sim/truth-json.ts';
import { burnInstructionData, CCTP_PROGRAM, DESTINATION_DOMAIN } from './burn.ts';
import { SolanaChain } from './chain.ts';
import { addressHex, devnetAddress, devnetKeyPair } from './ledger.ts';
import { startSolanaRpc } from './rpc.ts';

/** Mainnet addresses the tracker's defaults use. */
export { CCTP_PROGRAM };
export const SOLANA_OFT_PROGRAM = 'ChEfPd3RzLeYiRwp1K9evimmaFSd6DV1S4Mv5q5Aj1th';
/** CCTP domains: Solana (source) and the primary chain (destination). */
export const SOURCE_DOMAIN = 5;
export { DESTINATION_DOMAIN };

const WALLETS = 6;
type MintStep = (typeof MINT_STEPS)[number];

/**
 * A settled flow's final step statuses, in MINT_STEPS order: every step up to the Solana mint
 * completed; a refunded flow's relay failed, the steps after it skipped and its reclaim completed.
 */
function flowSteps(refunded: boolean): MintFlowTruth['steps'] {
  const relay = MINT_STEPS.indexOf('relay');
  const status = (step: MintStep, i: number) =>
    !refunded || i < relay || step === 'reclaim' ? 'completed' : i === relay ? 'failed' : 'skipped';
  return Object.fromEntries(
    MINT_STEPS.flatMap((step, i) => (step === 'reclaim' && !refunded ? [] : [[step, status(step, i)]])),
  );
}

export interface SolanaBurn {
  signature: string;
  wallet: KeyPairSigner;
  amount: bigint;
  at: number;
}

export class SolanaSim {
  /** Solana holders of the share (their wallets also burn USDC in the mint flows). */
  readonly wallets: KeyPairSigner[];
  readonly flows: MintFlowTruth[] = [];
  private readonly balances = new Map<string, bigint>();
  /** Holders after each change, with its time (Unix seconds). */
  private readonly holderSteps: { at: number; holders: number }[] = [];
  private supply = 0n;
  private transfers = 0;
  private readonly rng: Rng;

  private constructor(
    readonly chain: SolanaChain,
    readonly services: DevnetServices,
    readonly rpcUrl: string,
    private readonly stopRpc: () => Promise<void>,
    wallets: KeyPairSigner[],
    readonly oftStore: string,
    seed: number,
  ) {
    this.wallets = wallets;
    this.rng = new Rng(seed * 1_000_003 + 101);
  }

  static async start(seed: number, genesis: number, clock: () => number): Promise<SolanaSim> {
    const chain = await SolanaChain.create(seed, genesis, clock);
    const services = await startServices();
    const rpc = await startSolanaRpc(chain);
    const wallets = await Promise.all(
      Array.from({ length: WALLETS }, (_, i) => devnetKeyPair(seed, `solana:wallet:${i}`)),
    );
    return new SolanaSim(
      chain,
      services,
      rpc.url,
      () => rpc.close(),
      wallets,
      devnetAddress(seed, 'oft-store'),
      seed,
    );
  }

  get mint(): string {
    return this.chain.shareMint.address;
  }

  /** A flow's first leg at `at`: a wallet gets `amount` USDC (Circle's side) and burns it with a hook to `composer`. */
  async burn(at: number, amount: bigint, composer: Hex, relayer: Hex): Promise<SolanaBurn> {
    const wallet = this.rng.pick(this.wallets);
    this.chain.travelTo(at);
    await this.chain.mintTo(this.chain.usdcMint.address, wallet.address, amount);
    const recipient = addressHex(wallet.address);
    const data = burnInstructionData({
      amount,
      mintRecipient: relayer,
      composer,
      hookArgs: encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'uint256' }, { type: 'uint32' }, { type: 'bytes32' }],
        [recipient, amount, 30168, recipient],
      ),
    });
    const tx = await this.chain.burnWithHook(wallet, amount, { programId: CCTP_PROGRAM, data });
    return { signature: tx.signature, wallet, amount, at: tx.blockTime };
  }

  /**
   * The rest of a flow once the relay is on the primary chain: the attestation (it preceded the
   * relay), and unless refunded the LayerZero delivery: `shares` minted to the wallet on Solana.
   */
  async settle(
    burn: SolanaBurn,
    r: { nonce: Hex; relayTx: Hex; at: number; refunded: boolean; guid?: Hex; shares?: bigint },
  ): Promise<void> {
    this.services.state.iris.set(burn.signature, {
      status: 'complete',
      nonce: r.nonce,
      sourceDomain: SOURCE_DOMAIN,
      destinationDomain: DESTINATION_DOMAIN,
    });
    const flow: MintFlowTruth = {
      signature: burn.signature,
      wallet: burn.wallet.address,
      amount: burn.amount.toString(),
      burntAt: burn.at,
      nonce: r.nonce,
      relayTx: r.relayTx,
      refunded: r.refunded,
      steps: flowSteps(r.refunded),
    };
    if (!r.refunded && r.guid && r.shares !== undefined) {
      this.chain.travelTo(r.at);
      const tx = await this.chain.mintTo(this.mint, burn.wallet.address, r.shares);
      this.book(null, burn.wallet.address, r.shares, tx.blockTime);
      this.services.state.scan.set(r.guid.toLowerCase(), { status: 'DELIVERED', dstTxHash: tx.signature });
      Object.assign(flow, {
        guid: r.guid.toLowerCase(),
        shares: r.shares.toString(),
        mintSignature: tx.signature,
      });
    }
    this.flows.push(flow);
  }

  /** 0-2 transfers between holders from `at` on; returns how many were made. */
  async activity(at: number): Promise<number> {
    let done = 0;
    for (let i = this.rng.int(0, 2); i > 0; i--) if (await this.transfer(at + done)) done++;
    return done;
  }

  /** A holder sends part of their shares to another wallet (TransferChecked), at `at`. */
  async transfer(at: number): Promise<boolean> {
    const rich = this.wallets.filter((w) => (this.balances.get(w.address) ?? 0n) > 0n);
    if (!rich.length) return false;
    const from = this.rng.pick(rich);
    const to = this.rng.pick(this.wallets.filter((w) => w !== from));
    const balance = this.balances.get(from.address) ?? 0n;
    // Now and then the whole balance, so holders also leave.
    const amount = this.rng.chance(0.2) ? balance : (balance * BigInt(this.rng.int(10, 60))) / 100n || 1n;
    this.chain.travelTo(at);
    const tx = await this.chain.transfer(this.mint, from, to.address, amount);
    this.book(from.address, to.address, amount, tx.blockTime);
    this.transfers++;
    return true;
  }

  private book(from: string | null, to: string | null, amount: bigint, at: number): void {
    if (from) this.balances.set(from, (this.balances.get(from) ?? 0n) - amount);
    if (to) this.balances.set(to, (this.balances.get(to) ?? 0n) + amount);
    if (!from) this.supply += amount;
    if (!to) this.supply -= amount;
    this.holderSteps.push({ at, holders: [...this.balances.values()].filter((v) => v > 0n).length });
  }

  /** Holders at the end of each UTC day from the first change to the last (days without one carry the count on). */
  private holdersByDay(): Record<string, number> {
    const out: Record<string, number> = {};
    const steps = this.holderSteps;
    if (!steps.length) return out;
    const dayOf = (t: number) => Math.floor(t / 86_400);
    let k = 0;
    let holders = 0;
    for (let d = dayOf(steps[0].at); d <= dayOf(steps[steps.length - 1].at); d++) {
      while (k < steps.length && dayOf(steps[k].at) <= d) holders = steps[k++].holders;
      out[new Date(d * 86_400_000).toISOString().slice(0, 10)] = holders;
    }
    return out;
  }

  toJSON(): SolanaTruthJson {
    return {
      chainId: 101,
      mint: this.mint,
      oftStore: this.oftStore,
      balances: Object.fromEntries(
        [...this.balances]
          .filter(([, v]) => v > 0n)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([o, v]) => [o, v.toString()]),
      ),
      supply: this.supply.toString(),
      transfers: this.transfers,
      holdersByDay: this.holdersByDay(),
      mintFlows: this.flows,
    };
  }

  async stop(): Promise<void> {
    await this.stopRpc();
    await this.services.stop();
  }
}
