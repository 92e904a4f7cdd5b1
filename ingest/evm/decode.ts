/**
 * Log decoding. Every contract the ingester watches has a role; each role has the
 * ABIs of its event families, indexed by topic0 and topic count, because the two
 * ABI families reuse names: the Veda and Nucleus teller `Deposit` differ in topic0,
 * while the AtomicQueue and cross-chain teller events keep topic0 and differ only in
 * what is indexed (4 or 3 topics against 1).
 */
import { type Abi, type AbiEvent, type AbiParameter, decodeEventLog, type Hex, toEventSelector } from 'viem';
import * as abis from './abis.ts';

export type ContractRole =
  | 'share'
  | 'oft'
  | 'teller'
  | 'accountant'
  | 'authority'
  | 'queue'
  | 'nestVault'
  | 'operatorRegistry';

/** A log as `eth_getLogs` answers it, numbers parsed. */
export interface RawLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: number;
  blockHash: Hex;
  transactionHash: Hex;
  /** Position of the log's transaction in its block (absent on logs built by hand: -1 downstream). */
  transactionIndex?: number;
  logIndex: number;
  /** The block's timestamp where the provider puts it on the log (absent otherwise, or NaN if unreadable). */
  blockTimestamp?: number;
}

/** A decoded log: the event name and its arguments (addresses lower-cased, uint as bigint). */
export interface DecodedLog {
  log: RawLog;
  role: ContractRole;
  event: string;
  args: Record<string, unknown>;
}

const ROLE_ABIS: Record<ContractRole, Abi[]> = {
  share: [abis.shareEvents],
  oft: [abis.oftEvents],
  teller: [
    abis.tellerVedaEvents,
    abis.tellerNucleusEvents,
    abis.crossChainIndexedEvents,
    abis.crossChainPlainEvents,
  ],
  accountant: [abis.accountantEvents, abis.nestAccountantEvents, abis.pauseEvents],
  authority: [abis.authorityEvents],
  queue: [abis.atomicQueueIndexedEvents, abis.atomicQueuePlainEvents, abis.pauseEvents],
  nestVault: [abis.nestVaultEvents, abis.pauseEvents],
  operatorRegistry: [abis.operatorRegistryEvents],
};

const shapeKey = (topic0: string, topics: number) => `${topic0.toLowerCase()}/${topics}`;

function index(list: Abi[]): Map<string, AbiEvent> {
  const out = new Map<string, AbiEvent>();
  for (const abi of list)
    for (const item of abi) {
      if (item.type !== 'event') continue;
      const topics = 1 + item.inputs.filter((i) => i.indexed).length;
      out.set(shapeKey(toEventSelector(item), topics), item);
    }
  return out;
}

const BY_ROLE = Object.fromEntries(
  Object.entries(ROLE_ABIS).map(([role, list]) => [role, index(list)]),
) as Record<ContractRole, Map<string, AbiEvent>>;

/** Every topic0 some role decodes. */
export const KNOWN_TOPICS: Hex[] = [
  ...new Set(Object.values(BY_ROLE).flatMap((m) => [...m.keys()].map((k) => k.split('/')[0] as Hex))),
];

/** The topic0s of the named events of each role (every shape of each name): an `eth_getLogs` topic filter. */
export function topicsOf(events: Record<ContractRole, readonly string[]>): Hex[] {
  const out = new Set<Hex>();
  for (const [role, names] of Object.entries(events) as [ContractRole, readonly string[]][])
    for (const [key, item] of BY_ROLE[role]) if (names.includes(item.name)) out.add(key.split('/')[0] as Hex);
  return [...out];
}

function normalise(v: unknown): unknown {
  if (typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v)) return v.toLowerCase();
  if (Array.isArray(v)) return v.map(normalise);
  if (v && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
}

/** A reader of the 32-byte word at hex digit `start` of `hex` (a topic or the data), as viem returns it. */
type WordReader = (hex: string, start: number) => unknown;

/** The reader of one word for a static elementary type; undefined for any other type. */
function wordReader(type: string): WordReader | undefined {
  if (type === 'address') return (h, at) => `0x${h.slice(at + 24, at + 64).toLowerCase()}`;
  if (type === 'bool') return (h, at) => !/^0*$/.test(h.slice(at, at + 64));
  const bytes = /^bytes([0-9]+)$/.exec(type);
  if (bytes) {
    const digits = 2 * Number(bytes[1]);
    return (h, at) => `0x${h.slice(at, at + digits).toLowerCase()}`;
  }
  const int = /^(u?)int([0-9]*)$/.exec(type);
  if (!int) return undefined;
  const bits = Number(int[2] || 256);
  const signed = int[1] !== 'u';
  return (h, at) => {
    // A whole topic, or data of one word, is already a 0x-prefixed word.
    let v = at === 2 && h.length === 66 ? BigInt(h) : BigInt(`0x${h.slice(at, at + 64)}`);
    if (signed && v >= 1n << 255n) v -= 1n << 256n;
    // viem returns numbers for integers of up to 48 bits.
    return bits <= 48 ? Number(v) : v;
  };
}

interface StaticField {
  name: string;
  /** Data words it takes (a static tuple takes one per component). */
  words: number;
  /** Reads the field from its first word, at hex digit `start` of `hex`. */
  read: WordReader;
}

function staticField(param: AbiParameter): StaticField | undefined {
  if (param.type === 'tuple') {
    const parts = (param as { components: readonly AbiParameter[] }).components.map(staticField);
    if (parts.some((p) => !p)) return undefined;
    const fields = parts as StaticField[];
    return {
      name: param.name ?? '',
      words: fields.reduce((n, f) => n + f.words, 0),
      read: (h, at) => {
        const out: Record<string, unknown> = {};
        let k = at;
        for (const f of fields) {
          out[f.name] = f.read(h, k);
          k += 64 * f.words;
        }
        return out;
      },
    };
  }
  const read = wordReader(param.type);
  return read && { name: param.name ?? '', words: 1, read };
}

type FastDecoder = (log: RawLog) => Record<string, unknown> | undefined;

/**
 * A decoder that reads words straight from the topics and data, for events whose
 * parameters are all static (every event the ingester reads): an order of magnitude
 * faster than the generic ABI decoder on a backfill of millions of logs. Undefined
 * for an event with a dynamic parameter (decoded by viem instead).
 */
function fastDecoder(item: AbiEvent): FastDecoder | undefined {
  const plan = item.inputs.map((input) => ({ indexed: input.indexed === true, field: staticField(input) }));
  if (plan.some((p) => !p.field || (p.indexed && p.field.words !== 1))) return undefined;
  const fields = plan as { indexed: boolean; field: StaticField }[];
  const dataWords = fields.filter((p) => !p.indexed).reduce((n, p) => n + p.field.words, 0);
  return (log) => {
    const data = log.data;
    if (data.length !== 2 + 64 * dataWords) return undefined;
    const args: Record<string, unknown> = {};
    let topic = 1;
    let at = 2;
    for (const { indexed, field } of fields) {
      if (indexed) args[field.name] = field.read(log.topics[topic++], 2);
      else {
        args[field.name] = field.read(data, at);
        at += 64 * field.words;
      }
    }
    return args;
  };
}

interface Shape {
  item: AbiEvent;
  fast: FastDecoder | undefined;
}

/** Per role: topic0 as the node wrote it -> the event's shape by topic count (null: none). */
const SHAPES = Object.fromEntries(Object.keys(BY_ROLE).map((role) => [role, new Map()])) as Record<
  ContractRole,
  Map<string, (Shape | null)[]>
>;

function shapeOf(role: ContractRole, topic0: string, topics: number): Shape | undefined {
  let byCount = SHAPES[role].get(topic0);
  if (!byCount) {
    byCount = [];
    SHAPES[role].set(topic0, byCount);
  }
  let shape = byCount[topics];
  if (shape === undefined) {
    const item = BY_ROLE[role].get(shapeKey(topic0, topics));
    shape = item ? { item, fast: fastDecoder(item) } : null;
    byCount[topics] = shape;
  }
  return shape ?? undefined;
}

/**
 * Decodes `log` as an event of `role`; undefined when the role has no event of that
 * topic0 and topic count, or the data does not fit it (both are counted by the caller).
 */
export function decodeLog(role: ContractRole, log: RawLog): DecodedLog | undefined {
  const topic0 = log.topics[0];
  if (!topic0) return undefined;
  const shape = shapeOf(role, topic0, log.topics.length);
  if (!shape) return undefined;
  if (shape.fast) {
    const args = shape.fast(log);
    return args && { log, role, event: shape.item.name, args };
  }
  return decodeWithViem(shape.item, role, log);
}

/** The generic (viem) decoding of `log` as `role`, for tests holding the fast path equal to it. */
export function decodeLogGeneric(role: ContractRole, log: RawLog): DecodedLog | undefined {
  const item = BY_ROLE[role].get(shapeKey(log.topics[0] ?? '', log.topics.length));
  if (!item) return undefined;
  return decodeWithViem(item, role, log);
}

/** viem's strict decoding of `log` as `item`; undefined when the log does not fit the ABI. */
function decodeWithViem(item: AbiEvent, role: ContractRole, log: RawLog): DecodedLog | undefined {
  try {
    const d = decodeEventLog({
      abi: [item],
      topics: log.topics as [Hex, ...Hex[]],
      data: log.data,
      strict: true,
    });
    return { log, role, event: d.eventName, args: normalise(d.args) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}
