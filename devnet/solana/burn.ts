/**
 * A CCTP V2 `deposit_for_burn_with_hook` instruction's data as a Solana client builds it
 * (Anchor discriminator + Borsh params), with the Nest
 * hook data: composer (20 B) | depositAndSend selector (4 B) | hook args. No chain here,
 * so the tests' fixtures build their burns with it too.
 */
import { createHash } from 'node:crypto';
import { type Hex, toFunctionSelector } from 'viem';

/** Circle's TokenMessengerMinterV2 program on mainnet. */
export const CCTP_PROGRAM = 'CCTPV2vPZJS2u2BBsUoscuikbYjnpFmbFsvVuJdgUMQe';
/** CCTP domain of the primary chain (the mint flow's destination). */
export const DESTINATION_DOMAIN = 22;
export const DEPOSIT_AND_SEND = toFunctionSelector('depositAndSend(bytes32,uint256,uint32,bytes32)');

export interface BurnInstructionParams {
  amount: bigint;
  /** The relayer on the primary chain, as bytes32 (shorter hex is left-padded). */
  mintRecipient: Hex;
  composer: Hex;
  hookArgs: Hex;
  /** Default: the primary chain's domain. */
  destinationDomain?: number;
  /** The hook's 4-byte selector; default `depositAndSend`. */
  selector?: Hex;
  /** The Anchor instruction name of the discriminator; default `deposit_for_burn_with_hook`. */
  name?: string;
}

/** The instruction's data bytes. */
export function burnInstructionData(p: BurnInstructionParams): Uint8Array {
  const name = p.name ?? 'deposit_for_burn_with_hook';
  const disc = createHash('sha256').update(`global:${name}`).digest().subarray(0, 8);
  const u64 = (v: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(v);
    return b;
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    return b;
  };
  const hook = Buffer.concat([
    Buffer.from(p.composer.slice(2), 'hex'),
    Buffer.from((p.selector ?? DEPOSIT_AND_SEND).slice(2), 'hex'),
    Buffer.from(p.hookArgs.slice(2), 'hex'),
  ]);
  return Buffer.concat([
    disc,
    u64(p.amount),
    u32(p.destinationDomain ?? DESTINATION_DOMAIN),
    Buffer.from(p.mintRecipient.slice(2).padStart(64, '0'), 'hex'),
    Buffer.alloc(32), // destinationCaller: anyone
    u64(0n), // maxFee
    u32(2000), // minFinalityThreshold: standard
    u32(hook.length),
    hook,
  ]);
}
