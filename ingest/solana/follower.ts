/**
 * Follows one vault's Solana share mint. The opening reads every token account at one slot S
 * (streamed, checked against the supply; ingest/solana/accounts.ts, supply.ts) and the mint's
 * past transactions, and publishes the holders' history up to S (history.ts). Then each round
 * reads the mint's new signatures (`until` the newest handled, so an idle poll answers an empty
 * list) and their transactions in batches, applies them per slot to the indexed state
 * (changes.ts) and publishes their transfers. The account subscription (subscription.ts) names
 * the accounts changed by what does not list the mint (a plain SPL `Transfer`): their own
 * signatures lead to those transactions, read the same way.
 *
 * A round costs the changes it sees: one journal line (journal.ts: the accounts it set, the
 * cursor, the records) is durable before its records are published, and a restart replays the
 * lines and publishes the last one's records again (same identities: the consumers drop them).
 *
 * Never a wrong number silently: a full re-read (every `reconcileIntervalMs`, at once after a
 * subscription gap or a restart, every `unsubscribedReconcileIntervalMs` without one) whose total
 * is not the supply leaves the state as it was and fails the round (a source error), retried
 * later; a slot older than what is applied (getSlot, a read's context) is that node's fault and
 * the call goes to the next URL; the watermark never goes back.
 */
import type { Config } from '../../core/config.ts';
import { SOLANA_CHAIN_ID } from '../../schemas/families.ts';
import type { BlockRecord, TransferRecord } from '../../schemas/records.ts';
import { mintProgram } from './accounts.ts';
import type { MintTx } from './balances.ts';
import { openingRecords } from './history.ts';
import { type Cursor, type Journal, setEntry } from './journal.ts';
import { isLegacy, takeOver } from './legacy.ts';
import { explainNotices } from './notices.ts';
import type { Publish } from './publish.ts';
import { applyAll, blockTime, type MintReader, NO_BLOCK, site } from './reads.ts';
import { isSupplyMismatch, readState, reread } from './reread.ts';
import { nodeFault, rpcCodeOf, rpcError, type SolanaRpc } from './rpc.ts';
import { signaturesSince } from './signatures.ts';
import type { MintState } from './state.ts';
import type { AccountSubscription } from './subscription.ts';
import { readTransactions } from './transactions.ts';
import type { BlockHeader, SignatureInfo } from './types.ts';

/** How long after a failed subscription the follower tries again. */
const SUBSCRIBE_RETRY_MS = 10 * 60_000;

export interface FollowerDeps {
  vault: string;
  mint: string;
  rpc: SolanaRpc;
  publish: Publish;
  journal: Journal;
  settings: Config['solana'];
  clock: () => number;
  /** The mint's account subscription (absent: none, re-reads on the unsubscribed interval). */
  subscribe?: (program: string) => Promise<AccountSubscription | undefined>;
}

export interface FollowerProgress {
  vault: string;
  mint: string;
  phase: 'starting' | 'opening' | 'following';
  slot: number;
  transfers: number;
  /** The opening read's slot, once saved. */
  openingSlot?: number;
  subscribed: boolean;
  /** Clock time (ms) of the last full re-read that added up to the supply. */
  rereadAt?: number;
  /** Owners with a positive balance in the state. */
  holders: number;
}

/** Signatures handled per round at most (a backlog goes on in the next rounds, without a pause). */
const ROUND_SIGNATURES = 2000;

export class Follower {
  private state?: MintState;
  private cursor: Cursor = { slot: 0 };
  private phase: FollowerProgress['phase'] = 'starting';
  private program?: string;
  private sub?: AccountSubscription;
  private history: MintTx[] = [];
  private unpublished: TransferRecord[] = [];
  private backlog: SignatureInfo[] = [];
  private transfers = 0;
  private reconcileAt = 0;
  private reconcileFailures = 0;
  private opening?: { slot: number; time: number };
  private rereadAt?: number;
  private subscribeAt = 0;
  /** The state was loaded from the journal (not read in this process). */
  private restarted = false;

  constructor(private readonly deps: FollowerDeps) {}

  progress(): FollowerProgress {
    return {
      vault: this.deps.vault,
      mint: this.deps.mint,
      phase: this.phase,
      slot: this.cursor.slot,
      transfers: this.transfers,
      openingSlot: this.opening?.slot,
      subscribed: this.sub?.up ?? false,
      rereadAt: this.rereadAt,
      holders: this.state?.holders ?? 0,
    };
  }

  /** The subscription, whose notices may wake the next round early. */
  get subscription(): AccountSubscription | undefined {
    return this.sub;
  }

  /** One step of work; true when more is waiting (the next round should not pause). */
  async round(): Promise<boolean> {
    const s = this.deps.settings;
    this.program ??= await mintProgram(this.deps.rpc, this.deps.mint, s.commitment);
    if (this.deps.subscribe && !this.sub && this.deps.clock() >= this.subscribeAt) {
      this.sub = await this.deps.subscribe(this.program);
      // A provider without websockets is asked again only now and then (each try waits for an answer).
      if (!this.sub) this.subscribeAt = this.deps.clock() + SUBSCRIBE_RETRY_MS;
    }
    if (!this.state && !(await this.resume())) await this.open();
    if (this.phase === 'opening') {
      await this.publishOpening();
      return true;
    }
    if (this.unpublished.length) {
      await this.send(this.unpublished);
      this.unpublished = [];
    }
    const head = await this.head();
    if (this.deps.clock() >= this.reconcileAt && this.reconcileEvery() > 0) return this.reconcile(head);
    if (this.sub?.gap) return this.reconcile(head);
    const caughtUp = await this.follow(head);
    if (caughtUp) await this.publishWatermark(head);
    if (this.deps.journal.due) await this.compact();
    return !caughtUp;
  }

  private reconcileEvery(): number {
    const s = this.deps.settings;
    return this.sub?.up ? s.reconcileIntervalMs : s.unsubscribedReconcileIntervalMs;
  }

  /** What the reading helpers need (reads.ts). */
  private get ctx(): MintReader {
    const s = this.deps.settings;
    return {
      rpc: this.deps.rpc,
      mint: this.deps.mint,
      vault: this.deps.vault,
      program: this.program as string,
      state: this.state as MintState,
      clock: this.deps.clock,
      reads: {
        commitment: s.commitment,
        batchSize: s.transactionBatchSize,
        concurrency: s.maxConcurrentRequests,
        fallbackTime: Math.floor(this.deps.clock() / 1000),
        limit: s.pageLimit,
      },
    };
  }

  /** The saved state, if any; after a restart a re-read comes first (what changed while down is unknown). */
  private async resume(): Promise<boolean> {
    const old = this.deps.journal.saved();
    if (isLegacy(old) && old.mint === this.deps.mint) {
      const taken = await takeOver(this.ctx, old, this.deps.publish, this.deps.journal);
      this.state = taken.state;
      this.cursor = taken.cursor;
      this.phase = 'following';
      this.opening = { slot: taken.cursor.slot, time: taken.time };
      this.reconcileAt = this.deps.clock() + this.reconcileEvery();
      return true;
    }
    const saved = await this.deps.journal.load(this.deps.mint);
    if (!saved) return false;
    this.state = saved.state;
    this.cursor = saved.cursor;
    this.phase = saved.meta.phase;
    this.history = saved.history;
    this.unpublished = saved.unpublished;
    this.opening = { slot: saved.meta.openingSlot, time: saved.meta.openingTime };
    this.reconcileAt = this.deps.clock();
    this.restarted = true;
    return true;
  }

  /** The opening read: every account at S (checked against the supply), the past transactions, saved. */
  private async open(): Promise<void> {
    const { rpc, mint, settings } = this.deps;
    const { state, slot } = await readState(this.ctx);
    const read = { slot };
    const sigs = await signaturesSince(rpc, mint, {
      commitment: settings.commitment,
      limit: settings.pageLimit,
      max: Math.max(1, settings.historySignatures),
    });
    const past = sigs.filter((s) => s.slot <= read.slot).slice(0, Math.max(1, settings.historySignatures));
    // Newest first: the history is the newest run of transactions the node still has.
    const { txs } = settings.historySignatures
      ? await readTransactions(rpc, mint, past, this.ctx.reads)
      : { txs: [] };
    const history = txs.reverse();
    const time = await blockTime(this.ctx, read.slot);
    this.cursor = { slot: read.slot, signature: past[0]?.signature };
    await this.deps.journal.begin(
      state,
      { phase: 'opening', base: this.cursor, openingSlot: read.slot, openingTime: time },
      history,
    );
    this.state = state;
    this.history = history;
    this.phase = 'opening';
    this.opening = { slot: read.slot, time };
  }

  private async publishOpening(): Promise<void> {
    const at = { ...site(this.ctx), ...(this.opening as { slot: number; time: number }) };
    for (const chunk of openingRecords(this.state as MintState, this.history, at)) await this.send(chunk);
    await this.deps.journal.opened();
    this.history = [];
    this.phase = 'following';
    // After a restart the re-read stays due: what changed while the process was down is unknown.
    if (!this.restarted) this.reconcileAt = this.deps.clock() + this.reconcileEvery();
    await this.publishWatermark(at.slot);
  }

  private async send(records: TransferRecord[]): Promise<void> {
    await this.deps.publish('transfers', records);
    this.transfers += records.length;
  }

  /** The newest slot at or above what is applied (a lower one is that node's fault: next URL). */
  private head(): Promise<number> {
    const floor = this.cursor.slot;
    return this.deps.rpc.call<number>(
      'getSlot',
      [{ commitment: this.deps.settings.commitment }],
      (slot, url) => {
        if (slot < floor) throw nodeFault(url, 'getSlot', `slot ${slot} is behind the applied slot ${floor}`);
      },
    );
  }

  /** Saves a round's line (the state's new cursor), then publishes its records. */
  private async commit(cursor: Cursor, changed: Set<string>, records: TransferRecord[]): Promise<void> {
    const state = this.state as MintState;
    state.slot = cursor.slot;
    await this.deps.journal.append({
      cursor,
      set: [...changed].map((p) => setEntry(state, p)),
      ...(records.length ? { records } : {}),
    });
    this.cursor = cursor;
    // Kept until published: a failed publish is retried first in the next round.
    this.unpublished = records;
    if (records.length) await this.send(records);
    this.unpublished = [];
  }

  /** The mint's transactions after the cursor up to `head`, then the notices' accounts; true when caught up. */
  private async follow(head: number): Promise<boolean> {
    const { rpc, mint, settings } = this.deps;
    const before = this.cursor.slot;
    if (!this.backlog.length)
      this.backlog = (
        await signaturesSince(rpc, mint, {
          until: this.cursor.signature,
          commitment: settings.commitment,
          limit: settings.pageLimit,
        })
      )
        .filter((s) => s.slot <= head)
        .reverse();
    const sigs = this.backlog.slice(0, ROUND_SIGNATURES);
    const { txs, complete } = await readTransactions(rpc, mint, sigs, this.ctx.reads);
    this.backlog = this.backlog.slice(txs.length);
    const changed = new Set<string>();
    const records = applyAll(this.ctx, txs, changed);
    const last = txs.at(-1);
    const caughtUp = complete && !this.backlog.length;
    const cursor = {
      slot: caughtUp ? Math.max(before, head) : Math.max(before, (last?.slot ?? before + 1) - 1),
      signature: last?.signature ?? this.cursor.signature,
    };
    if (caughtUp && this.sub) {
      const seen = new Set(txs.map((t) => t.signature));
      records.push(...(await explainNotices(this.ctx, this.sub.take(head), { before, head, seen, changed })));
    }
    await this.commit(cursor, changed, records);
    return caughtUp;
  }

  /** A full re-read (reread.ts); a read that does not add up to the supply fails the round, retried later. */
  private async reconcile(head: number): Promise<boolean> {
    if (this.sub) this.sub.gap = false;
    let r: Awaited<ReturnType<typeof reread>>;
    try {
      r = await reread(this.ctx, this.cursor);
    } catch (e) {
      if (!isSupplyMismatch(e)) throw e;
      this.reconcileFailures++;
      const wait = Math.min(600_000, this.deps.settings.pollIntervalMs * 2 ** this.reconcileFailures);
      this.reconcileAt = this.deps.clock() + wait;
      if (this.sub) this.sub.gap = true;
      throw e;
    }
    if (!r) return true;
    this.sub?.take(r.slot);
    await this.commit(r.cursor, r.changed, r.records);
    this.reconcileFailures = 0;
    this.rereadAt = this.deps.clock();
    this.reconcileAt = this.rereadAt + this.reconcileEvery();
    return r.slot < head;
  }

  /** The state as the next generation's base (the journal starts empty). */
  private async compact(): Promise<void> {
    const o = this.opening as { slot: number; time: number };
    await this.deps.journal.begin(this.state as MintState, {
      phase: 'following',
      base: this.cursor,
      openingSlot: o.slot,
      openingTime: o.time,
    });
  }

  /** Chain 101's watermark: `slot`, all of whose changes are published. */
  private async publishWatermark(slot: number): Promise<void> {
    let block: BlockHeader;
    try {
      block = await this.deps.rpc.call<BlockHeader>('getBlock', [
        slot,
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
    if (!block) throw rpcError(-32004, `block ${slot} not available`, 'getBlock');
    const rec: BlockRecord = {
      chainId: SOLANA_CHAIN_ID,
      blockNumber: slot,
      blockHash: block.blockhash,
      parentHash: block.previousBlockhash,
      blockTimestamp: block.blockTime ?? Math.floor(this.deps.clock() / 1000),
      removed: false,
    };
    await this.deps.publish('blocks', [rec]);
  }
}
