/**
 * Follows one vault's Solana share mint: a full balance read first (every token
 * account of the mint, at a known slot), then the mint's transactions after that
 * slot, oldest first, each turned into transfers. The checkpoint (slot + last
 * signature) is saved after each published transaction, so a restart resumes with
 * no gap; a transaction published twice after a crash has the same identity and
 * changes nothing downstream.
 */
import type { Config } from '../../core/config.ts';
import type { BlockRecord, TransferRecord } from '../../schemas/records.ts';
import type { CheckpointFile } from '../checkpoint.ts';
import { openingTransfers, SOLANA_CHAIN_ID, transactionTransfers } from './balances.ts';
import type { Publish } from './publish.ts';
import { rpcError, type SolanaRpc } from './rpc.ts';
import { signaturesSince } from './signatures.ts';
import type { BlockHeader, ParsedTransaction, SignatureInfo, TokenAccount } from './types.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';

/** Where a follower stands. The opening read is kept until published, so a crash republishes the same read. */
export interface FollowerCheckpoint {
  mint: string;
  phase: 'opening' | 'following';
  /** Every change up to this slot is published (with `signature`, up to that transaction). */
  slot: number;
  signature?: string;
  opening?: TransferRecord[];
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

  constructor(private readonly d: FollowerDeps) {
    const saved = d.checkpoint.load();
    // A checkpoint of another mint (the registry changed) is not ours to resume.
    this.cp = saved?.mint === d.mint ? saved : undefined;
  }

  progress(): FollowerProgress {
    return {
      vault: this.d.vault,
      mint: this.d.mint,
      phase: this.cp?.phase ?? 'starting',
      slot: this.cp?.slot ?? 0,
      transfers: this.transfers,
    };
  }

  /** Opening read when none is published yet, else one poll of new transactions and the watermark. */
  async round(): Promise<void> {
    if (!this.cp) this.save(await this.readOpening());
    const cp = this.cp as FollowerCheckpoint;
    if (cp.phase === 'opening') {
      await this.d.publish('transfers', cp.opening ?? []);
      this.transfers += cp.opening?.length ?? 0;
      this.save({ mint: cp.mint, phase: 'following', slot: cp.slot });
      return;
    }
    const head = await this.d.rpc.call<number>('getSlot', [{ commitment: this.d.settings.commitment }]);
    const caughtUp = await this.followTransactions(await this.newSignatures());
    if (caughtUp) await this.publishWatermark(head);
  }

  private save(cp: FollowerCheckpoint): void {
    this.d.checkpoint.save(cp);
    this.cp = cp;
  }

  private async readOpening(): Promise<FollowerCheckpoint> {
    const { context, value } = await this.d.rpc.call<{ context: { slot: number }; value: TokenAccount[] }>(
      'getProgramAccounts',
      [
        TOKEN_PROGRAM,
        {
          commitment: this.d.settings.commitment,
          encoding: 'jsonParsed',
          withContext: true,
          filters: [{ dataSize: 165 }, { memcmp: { offset: 0, bytes: this.d.mint } }],
        },
      ],
    );
    const time = await this.blockTime(context.slot);
    return {
      mint: this.d.mint,
      phase: 'opening',
      slot: context.slot,
      opening: openingTransfers(value, this.d.mint, this.d.vault, context.slot, time),
    };
  }

  private async blockTime(slot: number): Promise<number> {
    try {
      const t = await this.d.rpc.call<number | null>('getBlockTime', [slot]);
      if (t !== null) return t;
    } catch (e) {
      if (!NO_BLOCK.has(Number((e as { details?: { rpcCode?: number } }).details?.rpcCode))) throw e;
    }
    return Math.floor(this.d.clock() / 1000);
  }

  /** Successful and failed signatures after the checkpoint, oldest first. */
  private async newSignatures(): Promise<SignatureInfo[]> {
    const cp = this.cp as FollowerCheckpoint;
    const found = await signaturesSince(this.d.rpc, this.d.mint, {
      until: cp.signature,
      commitment: this.d.settings.commitment,
      limit: this.d.settings.pageLimit,
      // Right after the opening read there is no signature yet: its slot is the bound.
      stop: cp.signature ? undefined : (s) => s.slot <= cp.slot,
    });
    return found.reverse();
  }

  /** Publishes each transaction's transfers in order; false when one is not available yet. */
  private async followTransactions(sigs: SignatureInfo[]): Promise<boolean> {
    for (const s of sigs) {
      if (!s.err) {
        const tx = await this.d.rpc.call<ParsedTransaction | null>('getTransaction', [
          s.signature,
          {
            commitment: this.d.settings.commitment,
            encoding: 'jsonParsed',
            maxSupportedTransactionVersion: 0,
          },
        ]);
        if (!tx) return false;
        const records = transactionTransfers(tx, this.d.mint, this.d.vault, s.blockTime ?? this.nowSeconds());
        await this.d.publish('transfers', records);
        this.transfers += records.length;
      }
      this.save({ mint: this.d.mint, phase: 'following', slot: s.slot, signature: s.signature });
    }
    return true;
  }

  /** Chain 101's watermark: the head slot read before the signatures, all of whose changes are now published. */
  private async publishWatermark(head: number): Promise<void> {
    let block: BlockHeader;
    try {
      block = await this.d.rpc.call<BlockHeader>('getBlock', [
        head,
        {
          commitment: this.d.settings.commitment,
          transactionDetails: 'none',
          rewards: false,
          maxSupportedTransactionVersion: 0,
        },
      ]);
    } catch (e) {
      const code = Number((e as { details?: { rpcCode?: number } }).details?.rpcCode);
      if (NO_BLOCK.has(code)) return; // a skipped slot: the next round's head will do
      throw e;
    }
    if (!block) throw rpcError(-32004, `block ${head} not available`);
    const rec: BlockRecord = {
      chainId: SOLANA_CHAIN_ID,
      blockNumber: head,
      blockHash: block.blockhash,
      parentHash: block.previousBlockhash,
      blockTimestamp: block.blockTime ?? this.nowSeconds(),
      removed: false,
    };
    await this.d.publish('blocks', [rec]);
  }

  private nowSeconds(): number {
    return Math.floor(this.d.clock() / 1000);
  }
}
