/**
 * What the devnet's Solana ledger keeps of a transaction (devnet/solana/chain.ts executes them,
 * `rpc.ts` serves them): the ledger's types, the jsonParsed rendering of the token
 * instructions, and the deterministic keys and addresses the devnet names its accounts with.
 */
import { createHash } from 'node:crypto';
import {
  address,
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  type KeyPairSigner,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { uiAmount } from './wire.ts';

export const TOKEN_PROGRAM = TOKEN_PROGRAM_ADDRESS as string;
export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const SHARE_DECIMALS = 6;

/** One token balance of a transaction, as `pre/postTokenBalances` state it. */
export interface LedgerBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  amount: bigint;
}

/** A rendered (jsonParsed-like) instruction: parsed for the token programs, raw otherwise. */
export interface LedgerInstruction {
  programId: string;
  program?: string;
  parsed?: unknown;
  accounts?: string[];
  data?: string;
  stackHeight: number | null;
}

/** What the ledger keeps of one executed transaction. */
export interface LedgerTx {
  signature: string;
  slot: number;
  blockTime: number;
  accountKeys: { pubkey: string; signer: boolean; writable: boolean }[];
  instructions: LedgerInstruction[];
  innerInstructions: { index: number; instructions: LedgerInstruction[] }[];
  logMessages: string[];
  computeUnits: number;
  fee: number;
  pre: LedgerBalance[];
  post: LedgerBalance[];
}

const base58 = getBase58Decoder();
const addressBytes = getAddressEncoder();

/** A deterministic key pair named `label` under `seed` (ed25519 from sha256(seed, label)). */
export function devnetKeyPair(seed: number, label: string): Promise<KeyPairSigner> {
  const bytes = createHash('sha256').update(`vaultstream-devnet:${seed}:${label}`).digest();
  return createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(bytes));
}

/** Base58 of a 32-byte label hash: a stable address nobody holds the key of (the OFT store). */
export function devnetAddress(seed: number, label: string): string {
  return base58.decode(createHash('sha256').update(`vaultstream-devnet:${seed}:${label}`).digest());
}

/** jsonParsed form of the token instructions the devnet sends; raw (base58 data) otherwise. */
export function renderInstruction(
  programId: string,
  accounts: string[],
  data: Uint8Array,
  stackHeight: number | null,
): LedgerInstruction {
  const raw: LedgerInstruction = { programId, accounts, data: base58.decode(data), stackHeight };
  if (programId !== TOKEN_PROGRAM || !data.length) return raw;
  const amount = () => Buffer.from(data).readBigUInt64LE(1).toString();
  const parsed = (type: string, info: Record<string, unknown>) => ({
    programId,
    program: 'spl-token',
    parsed: { type, info },
    stackHeight,
  });
  switch (data[0]) {
    case 8:
      return parsed('burn', {
        account: accounts[0],
        mint: accounts[1],
        authority: accounts[2],
        amount: amount(),
      });
    case 12:
      return parsed('transferChecked', {
        source: accounts[0],
        mint: accounts[1],
        destination: accounts[2],
        authority: accounts[3],
        tokenAmount: uiAmount(BigInt(amount()), data[9]),
      });
    case 14:
      return parsed('mintToChecked', {
        mint: accounts[0],
        account: accounts[1],
        mintAuthority: accounts[2],
        tokenAmount: uiAmount(BigInt(amount()), data[9]),
      });
    case 18:
      return parsed('initializeAccount3', {
        account: accounts[0],
        mint: accounts[1],
        owner: base58.decode(data.subarray(1, 33)),
      });
    case 20:
      return parsed('initializeMint2', {
        mint: accounts[0],
        decimals: data[1],
        mintAuthority: base58.decode(data.subarray(2, 34)),
      });
    default:
      return raw;
  }
}

/** The 32 bytes of a base58 address as 0x hex (an OFT `bytes32` recipient). */
export function addressHex(addr: string): `0x${string}` {
  return `0x${Buffer.from(addressBytes.encode(address(addr))).toString('hex')}`;
}
