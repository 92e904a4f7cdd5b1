/**
 * Pipeline throughput in its own process (chDB binds one data directory per process):
 * `npx tsx bench/pipeline-main.ts --bus embedded|kafka [--size tiny|full] [--out FILE.json]
 * [--events N] [--vaults V]`. Publishes N transfer events (1,000,000 full, 20,000 tiny) over V
 * vaults through the in-process bus (`embedded`) or the Kafka mock broker (devnet/kafka-mock.ts,
 * needs gcc and librdkafka-dev), runs the stream consumers until drained, and reports the
 * end-to-end rate (see bench/pipeline.ts) as `pipeline-<bus>`.
 */
import { startMockKafka } from '../devnet/kafka-mock.ts';
import { DATA_FAMILIES } from '../schemas/families.ts';
import { benchPipeline, type PipelineBenchResult } from './pipeline.ts';
import { benchArgs, round, row, writeReport } from './report.ts';

/** The figures for 1M events on this machine when the row was set: the target is no regression below them. */
const BASELINE: Record<string, number> = { embedded: 54_000, kafka: 25_000 };
const FULL_EVENTS = 1_000_000;

const {
  values,
  size,
  out: outArg,
} = benchArgs(
  'pipeline',
  { bus: 'embedded', vaults: '50', events: undefined },
  { tiny: { events: '20000' }, full: { events: String(FULL_EVENTS) } },
);
const bus = values.bus;
if (!(bus in BASELINE)) throw new Error(`pipeline: --bus must be embedded or kafka, not ${bus}`);
const name = `pipeline-${bus}`;
const out = outArg.replace(/pipeline-latest\.json$/, `${name}-latest.json`);
const opts = { events: Number(values.events), vaults: Number(values.vaults) };

let result: PipelineBenchResult;
if (bus === 'kafka') {
  const prefix = 'bench.';
  const kafka = await startMockKafka({
    topics: [...DATA_FAMILIES, 'dlq'].map((f) => `${prefix}${f}`),
    partitions: 4,
  });
  try {
    result = await benchPipeline({ ...opts, brokers: kafka.brokers, topicPrefix: prefix });
  } finally {
    await kafka.stop();
  }
} else {
  result = await benchPipeline(opts);
}
// The baseline is for 1M events over 50 vaults.
const full = opts.events === FULL_EVENTS && opts.vaults === 50;
const label = bus === 'kafka' ? 'through the Kafka mock' : 'embedded';
writeReport(out, {
  name,
  size,
  rows: [
    row(
      `pipeline ${label}, ${opts.events.toLocaleString('en')} events, publish to queryable`,
      result.eventsPerSecond,
      'events/s',
      { text: `≥ ${BASELINE[bus].toLocaleString('en')}`, bound: BASELINE[bus], better: 'higher' },
      full,
    ),
    row(`pipeline ${label}: CPU time of the process`, round(result.cpuSeconds), 'CPU-s'),
    row(`pipeline ${label}: peak RSS`, result.peakRssMb, 'MB'),
  ],
  result,
});
