/**
 * The devnet's anvil nodes give up the history's block states once live (settings
 * `devnet.historyStatesTicks`, `devnet.liveStates`). anvil 1.7.1 copies every block hash so
 * far into each block state it keeps, so a node's memory grows by the kept states x ~100 bytes
 * with every block mined (README.md, the disk and memory paragraph). The states of the whole
 * history are kept at first (devnet/run.ts `keptStates`), for an ingester to read the history
 * at its blocks; `--prune-history` cannot be changed on a running node, so after
 * `historyStatesTicks` live ticks each node restarts keeping `liveStates` (devnet/anvil.ts
 * `restart`): from a checkpoint of its chain taken `liveStates` ticks before, the blocks since
 * replayed, so that the restarted node holds the states a node keeping `liveStates` would: an
 * ingester up to that many blocks behind still reads the states it needs. Each carried state
 * holds its own copy of the contracts' code (about 1 MB in memory) until newer blocks push it
 * out. The restarted node also keeps the transactions, receipts and logs of only the last
 * `keepTransactionBlocks` blocks (`devnet.liveTransactionBlocks`; 0 = all): the history's
 * ingester has read them by then, and the replay reads only the blocks since the checkpoint.
 *
 * The restarted node's states copy the block hashes mined since it started (about 170 bytes x
 * `liveStates` a tick on the default devnet, measured: a third of what a node then grows by),
 * so the nodes restart the same way every `restartTicks` (`devnet.restartTicks`) live ticks,
 * which starts those copies from empty again.
 */
import type { Logger } from '../core/log.ts';
import type { AnvilNode } from './anvil.ts';

export interface StateTrimOptions {
  nodes: AnvilNode[];
  historyStatesTicks: number;
  liveStates: number;
  /** Blocks whose transactions the restarted nodes keep (devnet/anvil.ts); 0 = all. */
  keepTransactionBlocks: number;
  /** Live ticks between the later restarts; 0 = only the first. */
  restartTicks: number;
  /** Reconnects the simulator to the restarted nodes. */
  reconnect: () => Promise<void>;
  log: Logger;
}

export interface StateTrim {
  /** Called once the backfill is written (tick 0). */
  start(): Promise<void>;
  /** Called at the end of every live tick (devnet/simulator.ts `afterTick`). */
  afterTick(ticks: number): Promise<void>;
}

/** The nodes' checkpoint and restart at their ticks; a failure is logged and the nodes keep running as they are. */
export function stateTrim(o: StateTrimOptions): StateTrim {
  let restartAt = o.historyStatesTicks;
  let checkpointAt = Math.max(0, restartAt - o.liveStates);
  let restarts = 0;
  let off = o.liveStates === 0;
  const at = async (ticks: number) => {
    if (off) return;
    try {
      if (ticks === checkpointAt) await Promise.all(o.nodes.map((n) => n.checkpoint()));
      if (ticks !== restartAt) return;
      // The next restart, its checkpoint liveStates ticks before (not before this one).
      restartAt = o.restartTicks > 0 ? ticks + o.restartTicks : -1;
      checkpointAt = Math.max(ticks + 1, restartAt - o.liveStates);
      off = restartAt < 0;
      const done = await Promise.all(
        o.nodes.map((n) => n.restart(o.liveStates, o.keepTransactionBlocks)),
      ).finally(o.reconnect);
      restarts++;
      o.log.info(
        {
          restart: restarts,
          liveStates: o.liveStates,
          keepTransactionBlocks: o.keepTransactionBlocks,
          nodes: done.map((d, i) => ({ chainId: o.nodes[i].chainId, ...d })),
        },
        'devnet: anvil nodes restarted keeping fewer block states',
      );
    } catch (err) {
      off = true;
      o.log.error(
        { err: String(err), restarts },
        'devnet: could not restart the anvil nodes; they keep running as they are, and restart no more (their memory grows faster)',
      );
    }
  };
  return { start: () => at(0), afterTick: at };
}
