/** The parts of the Solana JSON-RPC answers the ingesters read (jsonParsed encoding). */

/** One `pre/postTokenBalances` entry. */
export interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  programId?: string;
  uiTokenAmount: { amount: string; decimals: number };
}

/** A `getTransaction` result with `encoding: "jsonParsed"`. */
export interface ParsedTransaction {
  slot: number;
  blockTime: number | null;
  meta: {
    err: unknown;
    preTokenBalances?: TokenBalance[];
    postTokenBalances?: TokenBalance[];
    logMessages?: string[];
    innerInstructions?: { index: number; instructions: ParsedInstruction[] }[];
  } | null;
  transaction: {
    signatures: string[];
    message: {
      accountKeys: { pubkey: string; signer: boolean; writable: boolean }[];
      instructions: ParsedInstruction[];
    };
  };
}

/** A jsonParsed instruction: parsed for known programs, raw (`accounts`, `data`) otherwise. */
export interface ParsedInstruction {
  programId: string;
  accounts?: string[];
  data?: string;
  parsed?: unknown;
  program?: string;
}

/** One `getSignaturesForAddress` entry. */
export interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
  blockTime: number | null;
  confirmationStatus?: string | null;
}

/** One `getProgramAccounts` entry of a jsonParsed SPL token account. */
export interface TokenAccount {
  pubkey: string;
  account: {
    data: {
      /** `account` for token accounts (Token-2022 also answers `mint` / `multisig` for other sizes). */
      parsed: { type?: string; info: { mint: string; owner: string; tokenAmount: { amount: string } } };
    };
  };
}

/** `getBlock` with `transactionDetails: "none"`. */
export interface BlockHeader {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  blockTime: number | null;
}
