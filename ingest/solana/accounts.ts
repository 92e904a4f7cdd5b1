/**
 * A full read of a mint's token accounts at one known slot, under whichever token
 * program owns the mint: the classic Token program or Token-2022. The program is
 * looked up once from the mint account rather than by reading both programs,
 * because two getProgramAccounts calls answer at two different slots and the read
 * must describe a single slot (a mint's accounts always live under its own program).
 */
import { VaultstreamError } from '../../core/errors.ts';
import type { SolanaRpc } from './rpc.ts';
import type { TokenAccount } from './types.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';

/** Token accounts of one mint and the slot the node read them at. */
export interface AccountsRead {
  slot: number;
  accounts: TokenAccount[];
}

/** The token program owning `mint` (getAccountInfo's `owner`). */
export async function mintProgram(rpc: SolanaRpc, mint: string, commitment: string): Promise<string> {
  const { value } = await rpc.call<{ value: { owner: string } | null }>('getAccountInfo', [
    mint,
    { commitment, encoding: 'jsonParsed' },
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
 * Every token account of `mint` under `program`, with the answer's `context.slot`.
 * Token accounts are 165 bytes, but Token-2022 ones grow with extensions, so there
 * only the mint filter at offset 0 applies and the parsed `type` keeps the accounts
 * (a Token-2022 mint or multisig could match the bytes at offset 0 too).
 * `minContextSlot` makes a lagging node refuse rather than answer an older state.
 */
export async function readMintAccounts(
  rpc: SolanaRpc,
  mint: string,
  program: string,
  opts: { commitment: string; minContextSlot?: number },
): Promise<AccountsRead> {
  const byMint = { memcmp: { offset: 0, bytes: mint } };
  const { context, value } = await rpc.call<{ context: { slot: number }; value: TokenAccount[] }>(
    'getProgramAccounts',
    [
      program,
      {
        commitment: opts.commitment,
        encoding: 'jsonParsed',
        withContext: true,
        ...(opts.minContextSlot ? { minContextSlot: opts.minContextSlot } : {}),
        filters: program === TOKEN_PROGRAM ? [{ dataSize: 165 }, byMint] : [byMint],
      },
    ],
  );
  const accounts = value.filter(
    (a) =>
      (a.account.data.parsed.type ?? 'account') === 'account' && a.account.data.parsed.info.mint === mint,
  );
  return { slot: context.slot, accounts };
}
