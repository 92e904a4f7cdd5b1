/**
 * The tracker's HTTP sources read the services' published payloads verbatim (Iris
 * v2 both nonce forms, Predicate v1 both verdicts, LayerZero scan), the burn
 * parser accepts only a hook burn to a vault composer, and the Solana delta pairing
 * is exact for any mix of senders and receivers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../core/config.ts';
import { VaultstreamError } from '../../core/errors.ts';
import { parseBurn } from '../../ingest/mintflow/burn.ts';
import { irisSource, layerZeroScanSource, predicateSource } from '../../ingest/mintflow/http-sources.ts';
import { pairDeltas, SOLANA_ZERO } from '../../ingest/solana/balances.ts';
import { faultCode } from '../../ingest/solana/rpc.ts';
import type { ParsedTransaction } from '../../ingest/solana/types.ts';
import { burnInstructionData, TOKEN_MESSENGER_MINTER_V2 } from '../fixtures/solana/burn.ts';
import { address, signature } from '../fixtures/solana/keys.ts';
import { COMPOSER, solanaVault } from '../fixtures/solana/vaults.ts';
import { seededRandom } from '../support/rng.ts';
import { type Standin, startStandin } from '../support/standins/server.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/solana');
const sample = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
let s: Standin;

beforeAll(async () => {
  // Answers each service's published sample, verbatim, by path.
  s = await startStandin((req) => {
    const tx = req.query.get('transactionHash');
    if (req.path === '/v2/messages/0' && tx === 'real')
      return { body: sample('iris_v2_messages.complete.real-sandbox.json') };
    if (req.path === '/v2/messages/7' && tx === 'docs')
      return { body: sample('iris_v2_messages.openapi-example.json') };
    if (req.path.startsWith('/v2/messages/'))
      return { status: 404, body: sample('iris_error_404.openapi-example.json') };
    if (req.path === '/v1/task') {
      const from = (req.body as { from: string }).from;
      return {
        body: sample(
          from === 'bad' ? 'v1_task.response.not-compliant.json' : 'v1_task.response.compliant.json',
        ),
      };
    }
    if (req.path.startsWith('/v1/messages/guid/'))
      return { body: sample('scan_v1_messages_tx.delivered.testnet.json') };
    return { status: 404, body: {} };
  });
});
afterAll(async () => s?.close());

describe('HTTP sources over the published samples', () => {
  it('Iris v2: hex and decimal nonces, domains, 404 as not yet seen, 5xx as a fault', async () => {
    const iris = irisSource(s.url, 2000);
    const real = sample('iris_v2_messages.complete.real-sandbox.json').messages[0];
    expect(await iris.byTransaction(0, 'real')).toEqual({
      status: 'complete',
      nonce: real.eventNonce.toLowerCase(),
      sourceDomain: Number(real.decodedMessage.sourceDomain),
      destinationDomain: Number(real.decodedMessage.destinationDomain),
    });
    const docs = await iris.byTransaction(7, 'docs');
    expect(docs).toMatchObject({ status: 'complete', sourceDomain: 7, destinationDomain: 5 });
    expect(BigInt((docs as { nonce: string }).nonce)).toBe(9682n);
    expect((docs as { nonce: string }).nonce).toHaveLength(66);
    expect(await iris.byTransaction(5, 'unknown')).toEqual({ status: 'not_found' });
    s.failNext({ status: 503 });
    const err = await iris.byTransaction(0, 'real').catch((e) => e);
    expect(err).toBeInstanceOf(VaultstreamError);
    expect(faultCode(err)).toBe('HTTP_503');
  });

  it('Predicate v1: compliant and not, with the task id', async () => {
    const predicate = predicateSource(s.url, 'key', 2000);
    expect(await predicate.check({ from: 'good', to: '0x', chainId: 98866 })).toEqual({
      compliant: true,
      taskId: sample('v1_task.response.compliant.json').task_id,
    });
    expect(await predicate.check({ from: 'bad', to: '0x', chainId: 98866 })).toEqual({
      compliant: false,
      taskId: sample('v1_task.response.not-compliant.json').task_id,
    });
    expect(s.requests.at(-1)?.headers['x-api-key']).toBe('key');
  });

  it('LayerZero scan: status and destination transaction', async () => {
    const m = sample('scan_v1_messages_tx.delivered.testnet.json').data[0];
    expect(await layerZeroScanSource(`${s.url}/v1`, 2000).byGuid(m.guid)).toEqual({
      status: 'DELIVERED',
      message: m.status.message,
      dstTxHash: m.destination.tx.txHash,
    });
  });
});

describe('burn recognition', () => {
  const config = parseConfig({ vaults: [solanaVault()] });
  const tx = (data: string, err: unknown = null): ParsedTransaction => ({
    slot: 7,
    blockTime: 1_760_000_007,
    meta: { err, preTokenBalances: [], postTokenBalances: [] },
    transaction: {
      signatures: [signature('b')],
      message: {
        accountKeys: [{ pubkey: address('w'), signer: true, writable: true }],
        instructions: [{ programId: TOKEN_MESSENGER_MINTER_V2, accounts: [], data }],
      },
    },
  });
  const params = {
    amount: 18_446_744_073_709_551_615n,
    destinationDomain: 22,
    mintRecipient: '0x01',
    composer: COMPOSER,
  };

  it('reads a hook burn to a vault composer, amount exact to the last unit', () => {
    expect(parseBurn(tx(burnInstructionData(params)), config)).toEqual({
      signature: signature('b'),
      vault: 'nest-alpha',
      wallet: address('w'),
      amount: '18446744073709551615',
      composer: COMPOSER,
      destinationDomain: 22,
      slot: 7,
      blockTime: 1_760_000_007,
    });
  });

  it('is no flow: a burn without hook, to another domain, to another composer, or failed', () => {
    expect(parseBurn(tx(burnInstructionData(params, 'deposit_for_burn')), config)).toBeUndefined();
    expect(parseBurn(tx(burnInstructionData({ ...params, destinationDomain: 0 })), config)).toBeUndefined();
    expect(
      parseBurn(tx(burnInstructionData({ ...params, composer: `0x${'ee'.repeat(20)}` })), config),
    ).toBeUndefined();
    expect(
      parseBurn(tx(burnInstructionData(params), { InstructionError: [0, 'Custom'] }), config),
    ).toBeUndefined();
  });
});

describe('Solana delta pairing', () => {
  it('moves exactly each owner delta, for random mixes of senders and receivers', () => {
    const rng = seededRandom(7);
    for (let round = 0; round < 200; round++) {
      const deltas: [string, bigint][] = [];
      const n = 1 + Math.floor(rng() * 6);
      for (let i = 0; i < n; i++) {
        const d = BigInt(Math.floor(rng() * 2e6) - 1e6) * 10n ** BigInt(Math.floor(rng() * 12));
        if (d !== 0n) deltas.push([`owner${i}`, d]);
      }
      const effect = new Map<string, bigint>();
      for (const t of pairDeltas(deltas)) {
        expect(t.amount > 0n).toBe(true);
        effect.set(t.from, (effect.get(t.from) ?? 0n) - t.amount);
        effect.set(t.to, (effect.get(t.to) ?? 0n) + t.amount);
      }
      effect.delete(SOLANA_ZERO);
      expect(new Map([...effect].filter(([, v]) => v !== 0n))).toEqual(new Map(deltas));
    }
  });
});
