/**
 * Child of test/integration/inprocess-bus-recovery.test.ts: appends to an in-process bus in a
 * loop, one publish at a time, and prints the sequence number of each publish once it has
 * resolved ("ack N"); values are `<tag>.<N>:<index>:<padding>`, until it is killed. Each publish holds `perPublish` records of ~`size` bytes
 * over every partition, so a SIGKILL often lands mid-write.
 */
import { InProcessBus } from '../../bus/inprocess.ts';

const [dir, tag = 'r', perPublish = '50', size = '3000'] = process.argv.slice(2);
const bus = new InProcessBus({ dir, partitions: 4 });
await bus.connect();
const pad = 'x'.repeat(Number(size));
for (let n = 0; ; n++) {
  const messages = Array.from({ length: Number(perPublish) }, (_, i) => ({
    key: `k${i % 13}`,
    value: Buffer.from(`${tag}.${n}:${i}:${pad}`),
  }));
  await bus.publish('t', messages);
  process.stdout.write(`ack ${n}\n`);
}
