// Entry of the batch encoder's worker threads (streams/batch-encoder.ts). Plain JavaScript,
// so it loads on any thread: a worker does not inherit its parent's module loader (not even
// one from `--import tsx`), so it registers tsx's, as bin/vaultstream.mjs does, and runs the
// TypeScript worker.
import { register } from 'tsx/esm/api';

register();
await import('./encode-worker.ts');
