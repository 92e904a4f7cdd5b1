// The API thread's first module (api/thread/host.ts starts it): plain JavaScript, so it loads the
// same way from the sources and from the esbuild bundle. It imports the module the host names:
// dist/api-thread.js when the CLI runs compiled, else api/thread/worker.ts through tsx's loader
// (a loader registered on the main thread does not reach a worker, so it is registered here).
import { workerData } from 'node:worker_threads';

const { module } = workerData;
if (module.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(module);
