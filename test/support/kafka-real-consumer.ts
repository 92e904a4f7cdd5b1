/**
 * One consumer process of a group, for the real-broker suite (test/integration/kafka-real-bus.test.ts):
 * `node --import tsx kafka-real-consumer.ts <brokers> <groupId> <topic> <partitions> <out file>`.
 * A KafkaBus subscription whose handler appends each message as `<partition> <offset> <id>` to
 * the out file and fsyncs it before returning (a store's durable insert; the commit follows),
 * after a pause of PAUSE_MS per batch (an insert's time). Prints `joined` once in the group.
 * SIGTERM stops it cleanly; SIGKILL is the crash the suite makes.
 */
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { KafkaBus } from '../../bus/kafka.ts';
import { idOf } from './kafka-mock/fixture.ts';

const PAUSE_MS = 30;
const [brokers, groupId, topic, partitions, out] = process.argv.slice(2);
const fd = openSync(out, 'a');
const bus = new KafkaBus({
  brokers: brokers.split(','),
  clientId: `vs-test-${process.pid}`,
  partitions: Number(partitions),
  sessionTimeoutMs: 6_000,
});
const sub = await bus.subscribe({
  groupId,
  topics: [topic],
  maxBatchSize: 25,
  maxWaitMs: 50,
  handler: async (batch) => {
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    const lines = batch.messages.map((m) => `${batch.partition} ${m.offset} ${idOf(m.value)}\n`).join('');
    writeSync(fd, lines);
    fsyncSync(fd);
  },
});
process.stdout.write('joined\n');
process.once('SIGTERM', async () => {
  await sub.stop();
  await bus.close();
  closeSync(fd);
  process.exit(0);
});
