/**
 * The range a provider's eth_getLogs refusal suggests (rpc/evm-transport.ts rangeHint), read
 * from the providers' own wordings, and taken by the ingester's reader before any halving: over
 * HTTP against the sparse chain (devnet/sparse-chain.ts), which refuses as Alchemy does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SparseChain, startSparseChain } from '../../devnet/sparse-chain.ts';
import { rangeHint, rpcAnswerFault } from '../../rpc/rpc-faults.ts';
import { sparseChainReader } from './evm-support.ts';

const refusal = (message: string, code = -32602, data?: unknown) =>
  rpcAnswerFault({ code, message, data }, 'eth_getLogs');

describe('rangeHint: what a refusal says would work', () => {
  it.each([
    [
      'Alchemy, a block-span limit',
      refusal(
        'You can make eth_getLogs requests with up to a 500 block range. Based on your parameters, this block range should work: [0x123c9b2, 0x123cba5]',
        -32600,
      ),
      0x123c9b2,
      { to: 0x123cba5, span: 500, countLimited: false },
    ],
    [
      'Alchemy, too many logs',
      refusal(
        'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters and the response size limit, this block range should work: [0x64, 0x1f3]',
      ),
      100,
      { to: 499, countLimited: true },
    ],
    [
      'Infura, too many results (the range in the error data)',
      refusal('query returned more than 10000 results', -32005, { from: '0x10', to: '0x20' }),
      16,
      { to: 32, countLimited: true },
    ],
    [
      'a node suggesting a range',
      refusal('query returned more than 10000 results. Try with this block range [0x5, 0x9].', -32005),
      5,
      { to: 9, countLimited: true },
    ],
    [
      'Infura, a span limit',
      refusal('range 1000000 exceeds limit of 10000'),
      7,
      { span: 10_000, countLimited: false },
    ],
    ['reth', refusal('query exceeds max block range 5000', -32602), 0, { span: 5000, countLimited: false }],
    [
      'Morph (geth fork)',
      refusal(
        'block range is larger than max block range, block range = 5120, max block range = 5000',
        -32000,
      ),
      0,
      { span: 5000, countLimited: false },
    ],
  ])('%s', (_, fault, from, hint) => {
    expect(fault.fault).toBe('RANGE_TOO_LARGE');
    expect(rangeHint(fault, from)).toEqual(hint);
  });

  it('names nothing when the refusal says nothing usable', () => {
    expect(rangeHint(refusal('block range too large'), 0)).toBeUndefined();
    expect(
      rangeHint(rpcAnswerFault({ code: -32000, message: 'execution reverted' }, 'eth_call'), 0),
    ).toBeUndefined();
  });
});

describe("the reader takes the provider's suggestion before halving", () => {
  let chain: SparseChain;
  beforeAll(async () => {
    chain = await startSparseChain({ blocks: 100_000, events: 1_000, maxLogs: 100 });
  });
  afterAll(() => chain.stop());

  const reader = (maxBlockRange: number) => sparseChainReader(chain, maxBlockRange);

  it('one refusal, then the suggested range: as many logs as the provider allows', async () => {
    const r = reader(1_000_000);
    r.sizer.size = 1_000_000;
    const before = chain.counts.get('eth_getLogs') ?? 0;
    const { logs, to } = await r.logs(0, chain.head);
    expect((chain.counts.get('eth_getLogs') ?? 0) - before).toBe(2);
    expect(logs).toHaveLength(100);
    // The suggested range ends just before the 101st log's block.
    expect(to).toBe(chain.eventBlocks[100] - 1);
    expect(logs.map((l) => l.blockNumber)).toEqual(chain.eventBlocks.slice(0, 100));
  });
});
