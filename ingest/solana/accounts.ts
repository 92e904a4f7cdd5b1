/**
 * A full read of a mint's token accounts at one known slot, under whichever token program owns
 * the mint: the classic Token program or Token-2022. The program is looked up once from the mint
 * account rather than by reading both programs, because two getProgramAccounts calls answer at
 * two different slots and the read must describe a single slot.
 *
 * The answer is `base64` with a `dataSlice` of the owner and the amount (40 bytes of the 165 of
 * an account, none of the parsed JSON), and it is parsed as it streams in: each account is handed
 * to `onAccount` and dropped, so no step holds the whole answer (a million accounts are hundreds
 * of megabytes; as one string they would pass V8's longest). The deadline is on progress
 * (rpc/evm-transport.ts `streamed`), not on the whole answer.
 */

import { base58 } from '@scure/base';
import { JSONParser } from '@streamparser/json';
import { VaultstreamError } from '../../core/errors.ts';
import { rpcAnswerFault } from '../../rpc/rpc-faults.ts';
import { nodeFault, type SolanaRpc } from './rpc.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** Layout of an SPL token account: mint at 0, owner at 32, amount (u64 LE) at 64; Token-2022's account type byte at 165. */
const OWNER_AT = 32;
const ACCOUNT_SIZE = 165;
const ACCOUNT_TYPE_ACCOUNT = 2;

/** One token account of the read. */
export interface ReadAccount {
  pubkey: string;
  owner: string;
  amount: bigint;
}

/** What a read found: its context slot, how many accounts and their total. */
export interface AccountsRead {
  slot: number;
  count: number;
  total: bigint;
}

/** The token program owning `mint` (getAccountInfo's `owner`). */
export async function mintProgram(rpc: SolanaRpc, mint: string, commitment: string): Promise<string> {
  const { value } = await rpc.call<{ value: { owner: string } | null }>('getAccountInfo', [
    mint,
    { commitment, encoding: 'base64', dataSlice: { offset: 0, length: 0 } },
  ]);
  if (!value) throw new VaultstreamError('NOT_FOUND', `solana mint ${mint} does not exist`);
  if (value.owner !== TOKEN_PROGRAM && value.owner !== TOKEN_2022_PROGRAM)
    throw new VaultstreamError(
      'CONFIG_INVALID',
      `solana mint ${mint} is owned by ${value.owner}, not a token program`,
    );
  return value.owner;
}

/**
 * Whether the mint filter alone keeps Token-2022's token accounts: a Token-2022 mint account
 * starts with a u32 option tag (0 or 1) and a multisig with two counts up to 11 and a flag, so
 * neither can begin with the bytes of a mint address that does not look like that. Otherwise the
 * slice reaches the account type byte too.
 */
function mintFilterIsExact(mint: string): boolean {
  const b = base58.decode(mint);
  const mintLike = b[1] === 0 && b[2] === 0 && b[3] === 0 && b[0] <= 1;
  const multisigLike = b[0] <= 11 && b[1] <= 11 && b[2] <= 1;
  return !mintLike && !multisigLike;
}

/**
 * The filters and slice that select `mint`'s token accounts under `program` (getProgramAccounts
 * and programSubscribe take the same); `exact` false: `accountOf` must check the type byte.
 */
export function accountSelection(mint: string, program: string) {
  const classic = program === TOKEN_PROGRAM;
  const exact = classic || mintFilterIsExact(mint);
  const byMint = { memcmp: { offset: 0, bytes: mint } };
  return {
    exact,
    encoding: 'base64',
    dataSlice: { offset: OWNER_AT, length: exact ? 40 : ACCOUNT_SIZE + 1 - OWNER_AT },
    filters: classic ? [{ dataSize: ACCOUNT_SIZE }, byMint] : [byMint],
  };
}

/**
 * Every token account of `mint` under `program`, each given to `onAccount` as the answer
 * streams in, and the answer's `context.slot`. `minContextSlot` makes a lagging node refuse
 * rather than answer an older state; `floor`: a context slot below it is that node's fault
 * (`nodeFault`: the read goes to the next URL), never an older state taken for the newest.
 * Classic accounts are exactly 165 bytes (`dataSize`); Token-2022 ones grow with extensions.
 */
export async function readMintAccounts(
  rpc: SolanaRpc,
  mint: string,
  program: string,
  opts: { commitment: string; minContextSlot?: number; floor?: number },
  onAccount: (a: ReadAccount) => void,
): Promise<AccountsRead> {
  const { exact, ...select } = accountSelection(mint, program);
  const params = [
    program,
    {
      commitment: opts.commitment,
      ...select,
      withContext: true,
      ...(opts.minContextSlot ? { minContextSlot: opts.minContextSlot } : {}),
    },
  ];
  return rpc.streamed('getProgramAccounts', params, async (chunks, url) => {
    const parser = new JSONParser({
      paths: ['$.result.context', '$.result.value.*', '$.error'],
      keepStack: false,
      // Short strings (addresses, base64 slices): concatenated, not buffered through a TextDecoder.
      stringBufferSize: 0,
      numberBufferSize: 0,
    });
    let slot: number | undefined;
    let error: { code: number; message: string } | undefined;
    let count = 0;
    let total = 0n;
    parser.onValue = ({ value, key }) => {
      if (key === 'context') {
        slot = (value as { slot: number }).slot;
        if (opts.floor !== undefined && slot < opts.floor)
          throw nodeFault(url, 'getProgramAccounts', `answered slot ${slot}, behind ${opts.floor}`);
      } else if (key === 'error') error = value as typeof error;
      else {
        const a = accountOf(value as unknown as WireAccount, exact);
        if (!a) return;
        count++;
        total += a.amount;
        onAccount(a);
      }
    };
    for await (const c of chunks) parser.write(c);
    if (error) throw rpcAnswerFault(error, 'getProgramAccounts', url);
    if (slot === undefined || !parser.isEnded)
      throw nodeFault(url, 'getProgramAccounts', 'answer without its context slot or cut short');
    return { slot, count, total };
  });
}

/** An account as getProgramAccounts and programNotification give it (base64 data). */
export interface WireAccount {
  pubkey: string;
  account: { data: [string, string] };
}

/**
 * An entry of the answer as an account; undefined for a Token-2022 entry that is not a token
 * account. The data is the slice asked for (from the owner at 32), or the whole account where a
 * node sent it all (a slice is always shorter than an account: its owner is then at 32).
 */
export function accountOf(e: WireAccount, exact: boolean): ReadAccount | undefined {
  const raw = Buffer.from(e.account.data[0], 'base64');
  const bytes = raw.length >= ACCOUNT_SIZE ? raw.subarray(OWNER_AT) : raw;
  if (bytes.length < 40) return undefined;
  // Without the exact filter the data reaches the account type byte: a token account is 165
  // bytes (no type byte) or longer with type Account; a mint (82 bytes) or multisig (355) is not.
  const typeAt = ACCOUNT_SIZE - OWNER_AT;
  if (!exact && !(bytes.length === typeAt || bytes[typeAt] === ACCOUNT_TYPE_ACCOUNT)) return undefined;
  return {
    pubkey: e.pubkey,
    owner: base58.encode(bytes.subarray(0, 32)),
    amount: bytes.readBigUInt64LE(32),
  };
}
