import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCodec, loadSchemas } from '../../schemas/codec.ts';
import { FAMILIES } from '../../schemas/families.ts';
import { rabinFingerprint } from '../../schemas/fingerprint.ts';
import { SchemaRegistryClient } from '../../schemas/registry-client.ts';

const rateV1 = {
  chainId: 98866,
  blockNumber: 12,
  blockHash: `0x${'ab'.repeat(32)}`,
  blockTimestamp: 1_760_000_000,
  txHash: `0x${'cd'.repeat(32)}`,
  logIndex: 3,
  removed: false,
  vault: 'nest-alpha',
  accountant: `0x${'11'.repeat(20)}`,
  rate: '1000123',
  rateDecimals: 6,
  source: 'EVENT',
};

describe('Avro codec', () => {
  it('computes the CRC-64-AVRO fingerprints of the Avro specification', () => {
    // Values from the Avro spec's test vectors for primitive schemas.
    expect(rabinFingerprint('"int"').toString(16)).toBe('7275d51a3f395c8f');
    expect(rabinFingerprint('"string"').toString(16)).toBe('8f014872634503c7');
  });

  it('has an Avro schema for every family and the zod fields match the Avro fields', () => {
    const schemas = loadSchemas();
    for (const [name, fam] of Object.entries(FAMILIES)) {
      const list = schemas.get(name as never);
      expect(list?.length, name).toBeGreaterThan(0);
      const avroFields = (list!.at(-1)!.type as any).fields.map((f: any) => f.name).sort();
      const zodFields = Object.keys((fam.schema as any).shape).sort();
      expect(zodFields, name).toEqual(avroFields);
    }
  });

  it('writes single-object encoding and reads it back', async () => {
    const codec = new EventCodec();
    const buf = await codec.encode('rates', { ...rateV1, isPaused: true });
    expect(buf.subarray(0, 2)).toEqual(Buffer.from([0xc3, 0x01]));
    expect(await codec.decode('rates', buf)).toMatchObject({ rate: '1000123', isPaused: true });
  });

  it('reads a record written with v1 through the v2 reader (default for the new field)', async () => {
    const codec = new EventCodec();
    const v1 = await codec.encode('rates', rateV1, 1);
    const rec = (await codec.decode('rates', v1)) as Record<string, unknown>;
    expect(rec.isPaused).toBe(false);
    expect(rec.rate).toBe('1000123');
    expect(codec.latest('rates').version).toBe(2);
  });

  it('reads a transfer written with v1 through v2: transactionIndex is the default, -1 (unknown)', async () => {
    const codec = new EventCodec();
    const transfer = {
      ...rateV1,
      token: `0x${'22'.repeat(20)}`,
      from: `0x${'33'.repeat(20)}`,
      to: `0x${'44'.repeat(20)}`,
      amount: '5',
    };
    const { accountant: _a, rate: _r, rateDecimals: _d, source: _s, ...v1 } = transfer;
    expect(codec.latest('transfers').version).toBe(2);
    const old = (await codec.decode('transfers', await codec.encode('transfers', v1, 1))) as Record<
      string,
      unknown
    >;
    expect(old).toMatchObject({ ...v1, transactionIndex: -1 });
    const now = await codec.decode(
      'transfers',
      await codec.encode('transfers', { ...v1, transactionIndex: 4 }),
    );
    expect(now).toMatchObject({ ...v1, transactionIndex: 4 });
    // Both validate: the old one with the default the consumer stores.
    expect(FAMILIES.transfers.schema.parse(old).transactionIndex).toBe(-1);
  });

  it('rejects garbage, a record of another family and a record that does not fit', async () => {
    const codec = new EventCodec();
    await expect(codec.decode('rates', Buffer.from('hello world'))).rejects.toThrow(/not an Avro/);
    const transfer = await codec.encode('source_errors', {
      vault: 'v',
      chainId: 1,
      source: 's',
      operation: 'o',
      message: 'm',
      code: 'TIMEOUT',
      timestamp: 1,
    });
    await expect(codec.decode('rates', transfer)).rejects.toThrow(/family source_errors/);
    await expect(codec.encode('rates', { ...rateV1, rate: 5 })).rejects.toThrow(/does not fit/);
    const truncated = (await codec.encode('rates', rateV1)).subarray(0, 20);
    await expect(codec.decode('rates', truncated)).rejects.toThrow(/undecodable/);
  });

  describe('Confluent framing with a schema registry', () => {
    const schemas: string[] = [];
    let url = '';
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        const m = /^\/schemas\/ids\/(\d+)$/.exec(req.url ?? '');
        if (req.method === 'POST' && /^\/subjects\/[^/]+\/versions$/.test(req.url ?? '')) {
          const s = JSON.parse(body).schema;
          let id = schemas.indexOf(s) + 1;
          if (id === 0) id = schemas.push(s);
          res.end(JSON.stringify({ id }));
        } else if (m && schemas[Number(m[1]) - 1]) {
          res.end(JSON.stringify({ schema: schemas[Number(m[1]) - 1] }));
        } else {
          res.statusCode = 404;
          res.end(JSON.stringify({ error_code: 40403, message: 'Schema not found' }));
        }
      });
    });
    beforeAll(async () => {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('frames with magic byte and schema id, and a fresh consumer resolves v1 via the registry', async () => {
      const producer = new EventCodec(new SchemaRegistryClient(url));
      const buf = await producer.encode('rates', rateV1, 1);
      expect(buf[0]).toBe(0);
      expect(buf.readUInt32BE(1)).toBe(1);
      const consumer = new EventCodec(new SchemaRegistryClient(url));
      expect(await consumer.decode('rates', buf)).toMatchObject({ rate: '1000123', isPaused: false });
      // The consumer reads single-object records too.
      expect(await consumer.decode('rates', await new EventCodec().encode('rates', rateV1))).toMatchObject({
        logIndex: 3,
      });
      const unknownId = Buffer.concat([Buffer.from([0, 0, 0, 0, 99]), buf.subarray(5)]);
      await expect(consumer.decode('rates', unknownId)).rejects.toThrow(/not found/);
    });
  });
});

describe('record validation', () => {
  it('words a non-numeric uint256 as an issue instead of throwing from its range check', () => {
    for (const amount of ['0xggg', '12x', '-1', '']) {
      const parsed = FAMILIES.rates.schema.safeParse({ ...rateV1, vault: 'v', rate: amount });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((i) => i.message)).toContain(
        'expected a non-negative integer as a decimal string',
      );
    }
  });
});
