/**
 * What a bare client reads of the sparse-chain benchmark's chain (bench/sparse-backfill.ts): the
 * ingester's eth_getLogs ranges, one after the other (the baseline the ingest is timed against),
 * and a throwaway chain read whole to warm the chain server's code.
 */
import { numberToHex } from 'viem';
import { type SparseChain, type SparseChainOptions, startSparseChain } from '../devnet/sparse-chain.ts';
import { topicsOf } from '../ingest/evm/decode.ts';
import { MAPPED_EVENTS } from '../ingest/evm/map.ts';

/** One JSON-RPC request (or batch) to `url`, its answer parsed. */
async function post(url: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return JSON.parse(await res.text());
}

/** The eth_getLogs filter of the chain's token, over the topics the ingester asks for. */
function logFilter(chain: SparseChain, from: number, to: number) {
  return {
    fromBlock: numberToHex(from),
    toBlock: numberToHex(to),
    address: [chain.token],
    topics: [topicsOf(MAPPED_EVENTS)],
  };
}

/** Reads `ranges` one after the other as a bare client would: the least time the logs take. */
async function logsAlone(chain: SparseChain, ranges: [number, number][]): Promise<number> {
  const started = performance.now();
  for (const [from, to] of ranges)
    await post(chain.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getLogs',
      params: [logFilter(chain, from, to)],
    });
  return (performance.now() - started) / 1000;
}

/**
 * The median of three reads of the ingester's ranges: one read takes 0.1-0.2 s, and on a shared
 * machine single reads minutes apart went from 0.099 to 0.211 s (the ratio's denominator).
 */
export async function medianLogsAlone(chain: SparseChain): Promise<number> {
  // A copy: the chain records the ranges it answers, these too.
  const ranges = [...chain.logRanges];
  const times = [];
  for (let k = 0; k < 3; k++) times.push(await logsAlone(chain, ranges));
  return times.sort((a, b) => a - b)[1];
}

/**
 * Reads every log of a throwaway chain (each answer as wide as the chain's cap on logs allows)
 * and a batch of headers: the chain server's code (log generation, JSON) is compiled by V8
 * before the first run. Otherwise the first run's ingest was served by a cold server (its 1.3 MB
 * answer took 37-56 ms, as much as the warm 2.6 MB ones) while the baseline, read after it, had
 * a warm one: logs alone from a fresh process took 143 ms cold against 77-97 ms warm. A
 * provider's servers are warm.
 */
export async function warmChainServer(opts: SparseChainOptions): Promise<void> {
  const chain = await startSparseChain(opts);
  try {
    for (let from = 0; from <= chain.head; ) {
      let to = chain.head;
      for (;;) {
        const answer = await post(chain.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [logFilter(chain, from, to)],
        });
        if (!answer.error) break;
        // The refusal names the widest range that works: "[0x.., 0x..]".
        const hint = /\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]/.exec(answer.error.message);
        if (!hint || Number(hint[2]) >= to) throw new Error(`warming the chain: ${answer.error.message}`);
        to = Number(hint[2]);
      }
      from = to + 1;
    }
    await post(
      chain.url,
      Array.from({ length: 100 }, (_, k) => ({
        jsonrpc: '2.0',
        id: k,
        method: 'eth_getBlockByNumber',
        params: [numberToHex(k), false],
      })),
    );
  } finally {
    await chain.stop();
  }
}
