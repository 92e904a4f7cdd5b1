/**
 * `vaultstream replay <file>`: publishes events from an NDJSON file, one event per
 * line as `{"family": "<family>", "record": {...}}`, through the configured bus. Bad
 * lines are reported with their line number and reason, sent to the dead-letter topic,
 * and do not stop the rest.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { topicName } from '../bus/partition.ts';
import type { Bus, BusMessage } from '../bus/types.ts';
import type { EventCodec } from '../schemas/codec.ts';
import { FAMILIES, type FamilyName, isFamily } from '../schemas/families.ts';

export interface ReplayReport {
  published: number;
  rejected: { line: number; reason: string }[];
}

export interface ReplayOptions {
  bus: Bus;
  codec: EventCodec;
  topicPrefix: string;
  /** Messages per publish call. */
  chunk?: number;
  now?: () => number;
}

/** Validates one NDJSON line into a family and an encodable record. */
export function parseLine(text: string): { family: FamilyName; record: unknown } | { error: string } {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
    return { error: 'expected a JSON object' };
  const { family, record } = obj as { family?: unknown; record?: unknown };
  if (typeof family !== 'string' || !isFamily(family) || family === 'dlq')
    return { error: `unknown family ${JSON.stringify(family)}` };
  const parsed = FAMILIES[family].schema.safeParse(record);
  if (!parsed.success)
    return {
      error: `invalid ${family} record: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ')}`,
    };
  return { family, record: parsed.data };
}

export async function replayFile(path: string, opts: ReplayOptions): Promise<ReplayReport> {
  const chunk = opts.chunk ?? 5000;
  const now = opts.now ?? Date.now;
  const report: ReplayReport = { published: 0, rejected: [] };
  const pending = new Map<FamilyName, BusMessage[]>();
  const dead: BusMessage[] = [];
  const flush = async (family: FamilyName) => {
    const msgs = pending.get(family);
    if (!msgs?.length) return;
    await opts.bus.publish(topicName(opts.topicPrefix, family), msgs);
    report.published += msgs.length;
    pending.set(family, []);
  };
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let lineNo = 0;
  for await (const text of rl) {
    lineNo++;
    if (text.trim() === '') continue;
    const res = parseLine(text);
    if ('error' in res) {
      report.rejected.push({ line: lineNo, reason: res.error });
      const letter = {
        topic: `replay:${path}`,
        partition: 0,
        offset: String(lineNo),
        key: '',
        reason: res.error,
        payload: Buffer.from(text),
        at: now(),
      };
      dead.push({ key: letter.topic, value: await opts.codec.encode('dlq', letter) });
      continue;
    }
    const key = FAMILIES[res.family].key(res.record as never);
    const list = pending.get(res.family) ?? [];
    list.push({ key, value: await opts.codec.encode(res.family, res.record) });
    pending.set(res.family, list);
    if (list.length >= chunk) await flush(res.family);
  }
  for (const f of pending.keys()) await flush(f);
  if (dead.length) await opts.bus.publish(topicName(opts.topicPrefix, 'dlq'), dead);
  return report;
}
