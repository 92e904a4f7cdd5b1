/** A batch encoder thread: runs `prepareRows` and `encodeRows` for the processor (streams/batch-encoder.ts). */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../core/errors.ts';
import { codecFor } from '../schemas/codec.ts';
import {
  encodeRows,
  prepareRows,
  unpackValues,
  type WorkerReply,
  type WorkerRequest,
  type WorkerSetup,
} from './batch-encoder.ts';

const setup = workerData as WorkerSetup;
const codec = codecFor(setup);
const pending = new Map<number, Omit<Awaited<ReturnType<typeof prepareRows>>, 'dead' | 'ranges'>>();
const port = parentPort!;

port.on('message', async (req: WorkerRequest) => {
  if (req.op === 'drop') {
    pending.delete(req.id);
    return;
  }
  let reply: WorkerReply;
  const transfer: ArrayBuffer[] = [];
  try {
    if (req.op === 'prepare') {
      const { dead, ranges, ...p } = await prepareRows(
        codec,
        req.family,
        unpackValues({ data: req.data, ends: req.ends }),
        req.firstVer,
      );
      pending.set(req.id, p);
      reply = { id: req.id, ok: true, result: { dead, ranges } };
    } else {
      const p = pending.get(req.id);
      if (!p) throw new Error(`no prepared batch ${req.id}`);
      pending.delete(req.id);
      const e = encodeRows(p, new Map(req.stored));
      transfer.push(
        e.tsv.buffer as ArrayBuffer,
        e.lineEnds.buffer as ArrayBuffer,
        e.source.buffer as ArrayBuffer,
      );
      reply = { id: req.id, ok: true, result: e };
    }
  } catch (err) {
    reply = { id: req.id, ok: false, error: errorMessage(err) };
  }
  port.postMessage(reply, transfer);
});
