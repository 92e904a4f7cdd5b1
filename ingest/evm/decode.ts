/**
 * Log decoding. Every contract the ingester watches has a role; each role has the
 * ABIs of its event families, indexed by topic0 and topic count, because the two
 * ABI families reuse names: the Veda and Nucleus teller `Deposit` differ in topic0,
 * while the AtomicQueue and cross-chain teller events keep topic0 and differ only in
 * what is indexed (4 or 3 topics against 1).
 */
import { type Abi, type AbiEvent, type AbiParameter, type Hex, toEventSelector } from 'viem';
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

type Decoder = (log: RawLog) => Record<string, unknown> | undefined;

/**
 * The decoder of `item`, derived from its ABI once: it reads each argument from its word of the
 * topics or the data (every event the ingester reads has static parameters only), an order of
 * magnitude cheaper than a generic ABI decoder over the millions of logs of a backfill. Its output
 * is viem's `decodeEventLog` output, addresses lower-cased (test/ingest/evm-decode-support.ts
 * holds every event of the test scenarios to that). An event with a dynamic parameter is refused
 * when the module loads, so none can reach the ingester undecodable.
 */
function decoderOf(item: AbiEvent): Decoder {
  const plan = item.inputs.map((input) => ({ indexed: input.indexed === true, field: staticField(input) }));
  if (plan.some((p) => !p.field || (p.indexed && p.field.words !== 1)))
    throw new Error(
      `ingest/evm/abis.ts: event ${item.name} has a dynamic parameter, which decode.ts cannot read`,
    );
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
  decode: Decoder;
}

/** Per role, `topic0/topics` -> the event's shape, built once for every event of the ABIs. */
const SHAPES = Object.fromEntries(
  Object.entries(BY_ROLE).map(([role, events]) => [
    role,
    new Map([...events].map(([key, item]) => [key, { item, decode: decoderOf(item) }])),
  ]),
) as Record<ContractRole, Map<string, Shape>>;

/**
 * Per role, topic0 as the node wrote it -> shape by topic count: no key built per log. Only
 * shapes found are kept, so topics an endpoint makes up cannot grow it.
 */
const SEEN = Object.fromEntries(Object.keys(BY_ROLE).map((role) => [role, new Map()])) as Record<
  ContractRole,
  Map<string, Shape[]>
>;

function shapeOf(role: ContractRole, topic0: string, topics: number): Shape | undefined {
  const seen = SEEN[role].get(topic0)?.[topics];
  if (seen) return seen;
  const shape = SHAPES[role].get(shapeKey(topic0, topics));
  if (shape) {
    const byCount = SEEN[role].get(topic0) ?? [];
    byCount[topics] = shape;
    SEEN[role].set(topic0, byCount);
  }
  return shape;
}

/**
 * Decodes `log` as an event of `role`; undefined when the role has no event of that
 * topic0 and topic count, or the data does not fit it (both are counted by the caller).
 */
export function decodeLog(role: ContractRole, log: RawLog): DecodedLog | undefined {
  const topic0 = log.topics[0];
  if (!topic0) return undefined;
  const shape = shapeOf(role, topic0, log.topics.length);
  const args = shape?.decode(log);
  return args && shape && { log, role, event: shape.item.name, args };
}

/** The ABI event `log` is as an event of `role` (its topic0 and topic count); undefined for none. */
export function abiEventOf(role: ContractRole, log: RawLog): AbiEvent | undefined {
  return BY_ROLE[role].get(shapeKey(log.topics[0] ?? '', log.topics.length));
}
