/**
 * The devnet's Solana side: a LiteSVM bank in this process running the real SPL
 * Token and Associated Token Account programs. It holds two mints (6 decimals):
 * vault 0's share mint (the share OFT's Solana side; the devnet's mint authority
 * stands in for the OFT program's PDA) and a USDC stand-in the mint flows burn.
 *
 * Every transaction is executed by the SVM (signed, fee-paid, each at its own slot
 * with the simulator's time on the Clock sysvar), and this class keeps what a
 * validator's ledger would answer about it: account keys, instructions, log
 * messages, inner instructions and the pre/post token balances read from the token
 * accounts around the execution (the ledger's types and the instructions' rendering are in
 * `ledger.ts`). `rpc.ts` serves that over JSON-RPC.
 *
 * The one thing not executed is the CCTP TokenMessengerMinterV2 program (no program
 * binary here): a mint flow's burn executes its effect, the SPL `Burn` of the user's
 * USDC, as the transaction's instruction, and the ledger presents it the way the
 * real transaction reads: a top-level `deposit_for_burn_with_hook` instruction of
 * the CCTP program (Borsh params, hook = composer | selector) with the burn as its
 * inner instruction.
 */
import {
  address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase58Decoder,
  getCompiledTransactionMessageDecoder,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  findAssociatedTokenPda,
  getBurnInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToCheckedInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { LiteSVM } from 'litesvm';
import {
  devnetKeyPair,
  type LedgerBalance,
  type LedgerInstruction,
  type LedgerTx,
  renderInstruction,
  SHARE_DECIMALS,
  TOKEN_PROGRAM,
} from './ledger.ts';

const FEE = 5000;
const EMPTY_SLOT_SECONDS = 30;
const base58 = getBase58Decoder();

interface TokenAccountInfo {
  mint: string;
  owner: string;
}

export class SolanaChain {
  readonly svm: LiteSVM;
  /** Every executed transaction, oldest first. */
  readonly txs: LedgerTx[] = [];
  /** Block time of each slot that has a block (transactions' slots and empty head slots). */
  private readonly slotTimes = new Map<number, number>();
  private readonly tokenAccounts = new Map<string, TokenAccountInfo>();
  private slot = 0;
  private lastTime = 0;
  private nextTime: number | undefined;

  private constructor(
    readonly payer: KeyPairSigner,
    /** Mint authority of both mints (the OFT program's PDA and Circle's minter stand in here). */
    readonly authority: KeyPairSigner,
    readonly shareMint: KeyPairSigner,
    readonly usdcMint: KeyPairSigner,
    private readonly clock: () => number,
  ) {
    this.svm = new LiteSVM();
  }

  /** Creates the bank and both mints at `genesis` (Unix seconds). */
  static async create(seed: number, genesis: number, clock: () => number = Date.now): Promise<SolanaChain> {
    const [payer, authority, shareMint, usdcMint] = await Promise.all(
      ['payer', 'authority', 'share-mint', 'usdc-mint'].map((l) => devnetKeyPair(seed, `solana:${l}`)),
    );
    const chain = new SolanaChain(payer, authority, shareMint, usdcMint, clock);
    chain.svm.airdrop(payer.address, lamports(1_000_000_000_000n));
    chain.travelTo(genesis);
    for (const mint of [shareMint, usdcMint]) {
      // The mint account's space is allocated up front (what the System Program's createAccount
      // does); InitializeMint2 then runs in the Token program.
      const size = getMintSize();
      chain.svm.setAccount({
        address: mint.address,
        lamports: lamports(chain.svm.minimumBalanceForRentExemption(BigInt(size))),
        programAddress: TOKEN_PROGRAM_ADDRESS,
        executable: false,
        data: new Uint8Array(size),
        space: BigInt(size),
      });
      await chain.execute([
        getInitializeMint2Instruction({
          mint: mint.address,
          decimals: SHARE_DECIMALS,
          mintAuthority: authority.address,
        }),
      ]);
    }
    return chain;
  }

  /** The following transactions carry `unixSeconds` (never earlier than the last one). */
  travelTo(unixSeconds: number): void {
    this.nextTime = unixSeconds;
  }

  /**
   * Head slot: a new empty slot at the wall clock once `EMPTY_SLOT_SECONDS` have passed since
   * the last one (slots keep coming, as on a validator, but coarsely: each new head is a new
   * chain-101 watermark downstream, and one a second would keep the data version moving).
   */
  head(): number {
    const now = Math.floor(this.clock() / 1000);
    if (now - this.lastTime >= EMPTY_SLOT_SECONDS) this.newSlot(now);
    return this.slot;
  }

  timeOf(slot: number): number | undefined {
    return this.slotTimes.get(slot);
  }

  private newSlot(time: number): number {
    this.slot++;
    this.lastTime = Math.max(time, this.lastTime);
    this.slotTimes.set(this.slot, this.lastTime);
    this.svm.warpToSlot(BigInt(this.slot));
    const c = this.svm.getClock();
    c.unixTimestamp = BigInt(this.lastTime);
    this.svm.setClock(c);
    return this.slot;
  }

  /** Raw balance of a token account (0 when it does not exist). */
  private amountOf(account: string): bigint {
    const a = this.svm.getAccount(address(account));
    return a.exists && a.data.length >= 72 ? Buffer.from(a.data).readBigUInt64LE(64) : 0n;
  }

  /** `owner`'s associated token account of `mint`. */
  async tokenAccount(mint: string, owner: string): Promise<string> {
    const [ata] = await findAssociatedTokenPda({
      mint: address(mint),
      owner: address(owner),
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    this.tokenAccounts.set(ata, { mint, owner });
    return ata;
  }

  /** Every token account of `mint` with its owner and raw amount (zero ones included). */
  accountsOf(mint: string): { pubkey: string; owner: string; amount: bigint }[] {
    return [...this.tokenAccounts]
      .filter(([pubkey, i]) => i.mint === mint && this.svm.getAccount(address(pubkey)).exists)
      .map(([pubkey, i]) => ({ pubkey, owner: i.owner, amount: this.amountOf(pubkey) }));
  }

  /** Mint supply (raw) read from the mint account. */
  supplyOf(mint: string): bigint {
    const a = this.svm.getAccount(address(mint));
    return a.exists ? Buffer.from(a.data).readBigUInt64LE(36) : 0n;
  }

  isMint(addr: string): boolean {
    return addr === this.shareMint.address || addr === this.usdcMint.address;
  }

  /** Mints `amount` of `mint` to `owner` (creating its token account when needed). */
  async mintTo(mint: string, owner: string, amount: bigint): Promise<LedgerTx> {
    const token = await this.tokenAccount(mint, owner);
    return this.execute([
      this.createAta(mint, owner, token),
      getMintToCheckedInstruction({
        mint: address(mint),
        token: address(token),
        mintAuthority: this.authority,
        amount,
        decimals: SHARE_DECIMALS,
      }),
    ]);
  }

  /** A `TransferChecked` of `amount` of `mint` from `from` to `to` (signed by `from`). */
  async transfer(mint: string, from: KeyPairSigner, to: string, amount: bigint): Promise<LedgerTx> {
    const source = await this.tokenAccount(mint, from.address);
    const destination = await this.tokenAccount(mint, to);
    return this.execute(
      [
        this.createAta(mint, to, destination),
        getTransferCheckedInstruction({
          source: address(source),
          mint: address(mint),
          destination: address(destination),
          authority: from,
          amount,
          decimals: SHARE_DECIMALS,
        }),
      ],
      undefined,
      from,
    );
  }

  /**
   * A mint flow's burn: `wallet` burns `amount` of the USDC stand-in (executed), presented as
   * the CCTP program's `deposit_for_burn_with_hook` with `data` (the instruction's bytes).
   */
  async burnWithHook(
    wallet: KeyPairSigner,
    amount: bigint,
    cctp: { programId: string; data: Uint8Array },
  ): Promise<LedgerTx> {
    const mint = this.usdcMint.address as string;
    const token = await this.tokenAccount(mint, wallet.address);
    return this.execute(
      [getBurnInstruction({ account: address(token), mint: address(mint), authority: wallet, amount })],
      (tx) => {
        const keys = [...tx.accountKeys, { pubkey: cctp.programId, signer: false, writable: false }];
        const burn = tx.instructions[0];
        const cctpIx: LedgerInstruction = {
          programId: cctp.programId,
          accounts: [wallet.address, token, mint, TOKEN_PROGRAM],
          data: base58.decode(cctp.data),
          stackHeight: null,
        };
        return {
          ...tx,
          accountKeys: keys,
          instructions: [cctpIx],
          innerInstructions: [{ index: 0, instructions: [{ ...burn, stackHeight: 2 }] }],
          logMessages: [
            `Program ${cctp.programId} invoke [1]`,
            'Program log: Instruction: DepositForBurnWithHook',
            ...tx.logMessages.map((l) => l.replace(/ invoke \[1\]$/, ' invoke [2]')),
            `Program ${cctp.programId} success`,
          ],
        };
      },
      wallet,
    );
  }

  private createAta(mint: string, owner: string, ata: string): Instruction {
    return getCreateAssociatedTokenIdempotentInstruction({
      payer: this.payer,
      ata: address(ata),
      owner: address(owner),
      mint: address(mint),
    });
  }

  /** Signs and executes `ixs` at the next slot; throws when the SVM rejects them. */
  private async execute(
    ixs: Instruction[],
    present: (tx: LedgerTx) => LedgerTx = (tx) => tx,
    feePayer: KeyPairSigner = this.payer,
  ): Promise<LedgerTx> {
    if (feePayer !== this.payer && !this.svm.getBalance(feePayer.address))
      this.svm.airdrop(feePayer.address, lamports(10_000_000_000n));
    const time = Math.max(this.nextTime ?? Math.floor(this.clock() / 1000), this.lastTime);
    const slot = this.newSlot(time);
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(feePayer, m),
      (m) => this.svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(ixs, m),
    );
    const signed = await signTransactionMessageWithSigners(message);
    const decoded = getCompiledTransactionMessageDecoder().decode(signed.messageBytes);
    if (!('instructions' in decoded)) throw new Error('devnet solana: expected a v0 message');
    const compiled = decoded;
    const keys = compiled.staticAccounts.map((k) => k as string);
    const h = compiled.header;
    const nSigners = h.numSignerAccounts;
    const writable = (i: number) =>
      i < nSigners
        ? i < nSigners - h.numReadonlySignerAccounts
        : i < keys.length - h.numReadonlyNonSignerAccounts;
    const balances = (): LedgerBalance[] =>
      keys.flatMap((k, i) => {
        const info = this.tokenAccounts.get(k);
        if (!info || !this.svm.getAccount(address(k)).exists) return [];
        return [{ accountIndex: i, mint: info.mint, owner: info.owner, amount: this.amountOf(k) }];
      });
    const pre = balances();
    const result = this.svm.sendTransaction(signed);
    if ('err' in result) {
      const meta = result.meta();
      throw new Error(
        `devnet solana: transaction failed: ${String(result.err())}\n${meta.logs().join('\n')}`,
      );
    }
    this.svm.expireBlockhash();
    const tx: LedgerTx = {
      signature: base58.decode(result.signature()),
      slot,
      blockTime: this.lastTime,
      accountKeys: keys.map((pubkey, i) => ({ pubkey, signer: i < nSigners, writable: writable(i) })),
      instructions: compiled.instructions.map((ix: (typeof compiled.instructions)[number]) =>
        renderInstruction(
          keys[ix.programAddressIndex],
          (ix.accountIndices ?? []).map((i: number) => keys[i]),
          new Uint8Array(ix.data ?? []),
          null,
        ),
      ),
      innerInstructions: result
        .innerInstructions()
        .map((list, index) => ({
          index,
          instructions: list.map((inner) => {
            const c = inner.instruction();
            return renderInstruction(
              keys[c.programIdIndex()],
              [...c.accounts()].map((i) => keys[i]),
              c.data(),
              inner.stackHeight(),
            );
          }),
        }))
        .filter((x) => x.instructions.length),
      logMessages: result.logs(),
      computeUnits: Number(result.computeUnitsConsumed()),
      fee: FEE * nSigners,
      pre,
      post: balances(),
    };
    const shown = present(tx);
    this.txs.push(shown);
    return shown;
  }
}
