/**
 * Follows one vault's Solana share mint: a full balance read first (every token
 * account of the mint, at a known slot), then the mint's transactions after that
 * slot, oldest first, each turned into transfers. The checkpoint (slot + last
 * signature + per-owner ledger) is saved after each published transaction, so a
 * restart resumes with no gap; a transaction published twice after a crash has the
 * same identity and changes nothing downstream.
 *
 * Every `reconcileIntervalMs` a fresh full read catches what the mint's signatures
 * never show (a plain SPL `Transfer` between two token accounts does not reference
 * the mint): the follower first publishes the mint's transactions up to the read's
 * slot, so its ledger is exactly as of that slot (later ones wait for the next
 * round and are not counted twice), then publishes the differences as corrections.
 */
import type { Config } from '../../core/config.ts';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { BlockRecord, TransferRecord } from '../../schemas/records.ts';
import type { CheckpointFile } from '../checkpoint.ts';
import { mintProgram, readMintAccounts } from './accounts.ts';
import { openingTransfers, transactionTransfers } from './balances.ts';
import { applyTransfers, correctionTransfers, type OwnerLedger, ownerBalances } from './ledger.ts';
import type { Publish } from './publish.ts';
import { rpcCodeOf, rpcError, type SolanaRpc } from './rpc.ts';
import { signaturesSince } from './signatures.ts';
import type { BlockHeader, ParsedTransaction, SignatureInfo } from './types.ts';

/** Where a follower stands. The opening read is kept until published, so a crash republishes the same read. */
export interface FollowerCheckpoint {
  mint: string;
  phase: 'opening' | 'following';
  /** Every change up to this slot is published (with `signature`, up to that transaction). */
  slot: number;
  signature?: string;
  opening?: TransferRecord[];
  /**
   * What has been published per owner up to `slot`/`signature`. Kept here rather
   * than read back from the views: the views lag the bus and cannot say which
   * slot they are at, while this is saved atomically with the cursor it matches.
   * Absent in checkpoints written before reconciliation existed (then not reconciled).
   */
  ledger?: OwnerLedger;
  /** Clock time (ms) of the last reconciliation (or of the opening read). */
  reconciledAt?: number;
  /** Corrections saved before they are published, so a crash republishes the same events. */
  corrections?: TransferRecord[];
}

export interface FollowerDeps {
  vault: string;
  mint: string;
  rpc: SolanaRpc;
  publish: Publish;
  checkpoint: CheckpointFile<FollowerCheckpoint>;
  settings: Config['solana'];
  clock: () => number;
}

export interface FollowerProgress {
  vault: string;
  mint: string;
  phase: FollowerCheckpoint['phase'] | 'starting';
  slot: number;
  transfers: number;
}

/** RPC errors meaning "no block at that slot" (skipped, not available, not confirmed yet). */
const NO_BLOCK = new Set([-32004, -32007, -32009]);

/** One vault's follower; `round()` does one step of work and is called in a loop by the ingester. */
export class Follower {
  private cp: FollowerCheckpoint | undefined;
  private transfers = 0;
  /** The mint's token program, looked up once per process. */
  private program: string | undefined;

  constructor(private readonly deps: FollowerDeps) {
    const saved = deps.checkpoint.load();
    // A checkpoint of another mint (the registry changed) is not ours to resume.
    this.cp = saved?.mint === deps.mint ? saved : undefined;
  }

  progress(): FollowerProgress {
    return {
      vault: this.deps.vault,
      mint: this.deps.mint,
      phase: this.cp?.phase ?? 'starting',
      slot: this.cp?.slot ?? 0,
      transfers: this.transfers,
    };
  }

  /** Opening read when none is published yet, else pending corrections, a due reconciliation, or one poll of new transactions and the watermark. */
  async round(): Promise<void> {
    if (!this.cp) await this.save(await this.readOpening());
    const cp = this.cp as FollowerCheckpoint;
    if (cp.phase === 'opening') {
      await this.deps.publish('transfers', cp.opening ?? []);
      this.transfers += cp.opening?.length ?? 0;
      await this.save({
        mint: cp.mint,
        phase: 'following',
        slot: cp.slot,
        ledger: applyTransfers({}, cp.opening ?? []),
        reconciledAt: this.deps.clock(),
      });
      return;
    }
    if (cp.corrections) return this.publishCorrections(cp.corrections);
    if (this.reconcileDue()) return this.reconcile();
    const head = await this.deps.rpc.call<number>('getSlot', [{ commitment: this.deps.settings.commitment }]);
    const caughtUp = await this.followTransactions(await this.newSignatures());
    if (caughtUp) await this.publishWatermark(head);
  }

  /** Durable once it resolves (written off the main thread: its fsyncs hold no other role's work). */
  private async save(cp: FollowerCheckpoint): Promise<void> {
    await this.deps.checkpoint.saveAsync(cp);
    this.cp = cp;
  }

  private async readAccounts(minContextSlot?: number) {
    this.program ??= await mintProgram(this.deps.rpc, this.deps.mint, this.deps.settings.commitment);
    return readMintAccounts(this.deps.rpc, this.deps.mint, this.program, {
      commitment: this.deps.settings.commitment,
      minContextSlot,
    });
  }

  private async readOpening(): Promise<FollowerCheckpoint> {
    const { slot, accounts } = await this.readAccounts();
    const time = await this.blockTime(slot);
    return {
      mint: this.deps.mint,
      phase: 'opening',
      slot,
      opening: openingTransfers(accounts, this.deps.mint, this.deps.vault, slot, time),
    };
  }

  private reconcileDue(): boolean {
    const cp = this.cp as FollowerCheckpoint;
    const every = this.deps.settings.reconcileIntervalMs;
    return every > 0 && cp.ledger !== undefined && this.deps.clock() - (cp.reconciledAt ?? 0) >= every;
  }

  /**
   * Reads every account at a slot R (no older than the checkpoint), publishes the
   * mint's transactions up to R, then saves and publishes the corrections from the
   * ledger (now as of R) to the read. A transaction not available yet leaves the
   * reconciliation to the next round.
   */
  private async reconcile(): Promise<void> {
    const read = await this.readAccounts((this.cp as FollowerCheckpoint).slot);
    if (read.slot < (this.cp as FollowerCheckpoint).slot) return;
    const upToRead = (await this.newSignatures()).filter((s) => s.slot <= read.slot);
    if (!(await this.followTransactions(upToRead))) return;
    const cp = this.cp as FollowerCheckpoint;
    const corrections = correctionTransfers(cp.ledger ?? {}, ownerBalances(read.accounts), {
      mint: this.deps.mint,
      vault: this.deps.vault,
      slot: read.slot,
      time: await this.blockTime(read.slot),
    });
    await this.save({
      ...cp,
      // Everything up to R is now published (the signatures up to R, then the corrections).
      slot: Math.max(cp.slot, read.slot),
      ledger: applyTransfers(cp.ledger ?? {}, corrections),
      reconciledAt: this.deps.clock(),
      ...(corrections.length ? { corrections } : {}),
    });
    if (corrections.length) await this.publishCorrections(corrections);
  }

  private async publishCorrections(corrections: TransferRecord[]): Promise<void> {
    await this.deps.publish('transfers', corrections);
    this.transfers += corrections.length;
    const { corrections: _published, ...rest } = this.cp as FollowerCheckpoint;
    await this.save(rest);
  }

  private async blockTime(slot: number): Promise<number> {
    try {
      const t = await this.deps.rpc.call<number | null>('getBlockTime', [slot]);
      if (t !== null) return t;
    } catch (e) {
      if (!NO_BLOCK.has(rpcCodeOf(e) ?? 0)) throw e;
    }
    return Math.floor(this.deps.clock() / 1000);
  }

  /** Successful and failed signatures after the checkpoint, oldest first. */
  private async newSignatures(): Promise<SignatureInfo[]> {
    const cp = this.cp as FollowerCheckpoint;
    const found = await signaturesSince(this.deps.rpc, this.deps.mint, {
      until: cp.signature,
      commitment: this.deps.settings.commitment,
      limit: this.deps.settings.pageLimit,
      // Right after the opening read there is no signature yet: its slot is the bound.
      stop: cp.signature ? undefined : (s) => s.slot <= cp.slot,
    });
    return found.reverse();
  }

  /** Publishes each transaction's transfers in order; false when one is not available yet. */
  private async followTransactions(sigs: SignatureInfo[]): Promise<boolean> {
    for (const s of sigs) {
      const cp = this.cp as FollowerCheckpoint;
      let ledger = cp.ledger;
      if (!s.err) {
        const tx = await this.deps.rpc.call<ParsedTransaction | null>('getTransaction', [
          s.signature,
          {
            commitment: this.deps.settings.commitment,
            encoding: 'jsonParsed',
            maxSupportedTransactionVersion: 0,
          },
        ]);
        if (!tx) return false;
        const records = transactionTransfers(
          tx,
          this.deps.mint,
          this.deps.vault,
          s.blockTime ?? this.nowSeconds(),
        );
        await this.deps.publish('transfers', records);
        this.transfers += records.length;
        ledger = ledger && applyTransfers(ledger, records);
      }
      // One save for the cursor and the ledger: a crash leaves both before or both after the transaction.
      await this.save({ ...cp, slot: s.slot, signature: s.signature, ...(ledger ? { ledger } : {}) });
    }
    return true;
  }

  /** Chain 101's watermark: the head slot read before the signatures, all of whose changes are now published. */
  private async publishWatermark(head: number): Promise<void> {
    let block: BlockHeader;
    try {
      block = await this.deps.rpc.call<BlockHeader>('getBlock', [
        head,
        {
          commitment: this.deps.settings.commitment,
          transactionDetails: 'none',
          rewards: false,
          maxSupportedTransactionVersion: 0,
        },
      ]);
    } catch (e) {
      if (NO_BLOCK.has(rpcCodeOf(e) ?? 0)) return; // a skipped slot: the next round's head will do
      throw e;
    }
    if (!block) throw rpcError(-32004, `block ${head} not available`, 'getBlock');
    const rec: BlockRecord = {
      chainId: SOLANA_CHAIN_ID,
      blockNumber: head,
      blockHash: block.blockhash,
      parentHash: block.previousBlockhash,
      blockTimestamp: block.blockTime ?? this.nowSeconds(),
      removed: false,
    };
    await this.deps.publish('blocks', [rec]);
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock() / 1000);
  }
}
