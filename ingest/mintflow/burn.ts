/**
 * Recognises a mint flow's first step in a Solana transaction: a CCTP V2
 * `deposit_for_burn_with_hook` (TokenMessengerMinterV2, top level or CPI) whose hook
 * data starts with the address of a vault composer (hook = composer (20 B) |
 * depositAndSend selector (4 B) | abi args).
 */
import { createHash } from 'node:crypto';
import { getBase58Encoder } from '@solana/web3.js';
import type { Config } from '../../core/config.ts';
import type { ParsedInstruction, ParsedTransaction } from '../solana/types.ts';

/** What the burn says about the flow. */
export interface Burn {
  signature: string;
  vault: string;
  /** The burn's signer (fee payer): the user's Solana wallet. */
  wallet: string;
  /** USDC burnt, raw u64 as a decimal string. */
  amount: string;
  /** The vault composer the hook targets, lower-case 0x address. */
  composer: string;
  destinationDomain: number;
  slot: number;
  blockTime: number;
}

/** Anchor's instruction discriminator: sha256("global:<name>")[0..8]. */
export const DEPOSIT_FOR_BURN_WITH_HOOK = createHash('sha256')
  .update('global:deposit_for_burn_with_hook')
  .digest()
  .subarray(0, 8);

interface HookParams {
  amount: bigint;
  destinationDomain: number;
  hookData: Buffer;
}

/** Borsh `DepositForBurnWithHookParams` after the discriminator; undefined when it is another instruction. */
export function decodeBurnParams(data: Uint8Array): HookParams | undefined {
  const b = Buffer.from(data);
  if (b.length < 8 + 8 + 4 + 32 + 32 + 8 + 4 + 4 || !b.subarray(0, 8).equals(DEPOSIT_FOR_BURN_WITH_HOOK))
    return undefined;
  const amount = b.readBigUInt64LE(8);
  const destinationDomain = b.readUInt32LE(16);
  // mintRecipient (32) at 20, destinationCaller (32) at 52, maxFee u64 at 84, minFinalityThreshold u32 at 92
  const len = b.readUInt32LE(96);
  if (b.length < 100 + len) return undefined;
  return { amount, destinationDomain, hookData: b.subarray(100, 100 + len) };
}

/** Every vault composer (lower-case) with its vault slug. */
export function composerIndex(config: Config): Map<string, string> {
  const out = new Map<string, string>();
  for (const v of config.vaults) {
    const list = [v.solana?.composerAddress, ...v.coreComposers.map((c) => c.composerAddress)];
    for (const a of list) if (a && /^0x[0-9a-fA-F]{40}$/.test(a)) out.set(a.toLowerCase(), v.slug);
  }
  return out;
}

function allInstructions(tx: ParsedTransaction): ParsedInstruction[] {
  return [
    ...tx.transaction.message.instructions,
    ...(tx.meta?.innerInstructions ?? []).flatMap((i) => i.instructions),
  ];
}

const base58 = getBase58Encoder();

/** The flow's burn in `tx`, or undefined when `tx` is no mint flow (failed, other instruction, other hook). */
export function parseBurn(tx: ParsedTransaction, config: Config): Burn | undefined {
  if (!tx.meta || tx.meta.err) return undefined;
  const programs = new Set(config.mintFlow.cctpPrograms);
  const composers = composerIndex(config);
  for (const ix of allInstructions(tx)) {
    if (!programs.has(ix.programId) || !ix.data) continue;
    let params: HookParams | undefined;
    try {
      params = decodeBurnParams(base58.encode(ix.data) as Uint8Array);
    } catch {
      continue; // not base58: not ours
    }
    if (
      !params ||
      params.hookData.length < 20 ||
      params.destinationDomain !== config.mintFlow.destinationDomain
    )
      continue;
    const composer = `0x${params.hookData.subarray(0, 20).toString('hex')}`;
    const vault = composers.get(composer);
    if (!vault) continue;
    return {
      signature: tx.transaction.signatures[0],
      vault,
      wallet: tx.transaction.message.accountKeys[0].pubkey,
      amount: params.amount.toString(),
      composer,
      destinationDomain: params.destinationDomain,
      slot: tx.slot,
      blockTime: tx.blockTime ?? 0,
    };
  }
  return undefined;
}
