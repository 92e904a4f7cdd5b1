/** One pipeline benchmark in its own process; prints its result as the last line of JSON. */
import { DATA_FAMILIES } from '../schemas/families.ts';
import { benchPipeline } from './pipeline.ts';

const [mode, events, vaults] = process.argv.slice(2);
const opts = { events: Number(events), vaults: Number(vaults) };
if (mode === 'kafka') {
  const { kafkaToolchainProblem, startMockKafka } = await import('../test/support/kafka-broker.ts');
  const problem = kafkaToolchainProblem();
  if (problem) throw new Error(`kafka benchmark needs the mock broker: ${problem}`);
  const prefix = 'bench.';
  const kafka = await startMockKafka({
    topics: [...DATA_FAMILIES, 'dlq'].map((f) => `${prefix}${f}`),
    partitions: 4,
  });
  try {
    console.log(
      JSON.stringify(await benchPipeline({ ...opts, brokers: kafka.brokers, topicPrefix: prefix })),
    );
  } finally {
    await kafka.stop();
  }
} else {
  console.log(JSON.stringify(await benchPipeline(opts)));
}
