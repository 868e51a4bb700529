import { loadConfig } from '../../../libs/config/src/index.js';
import { closeRuntime, createRuntime, onShutdown } from '../../../libs/runtime/src/index.js';
import { startCsvWorker } from '../../../libs/csv-import/src/index.js';

const cfg = loadConfig();
const rt = await createRuntime(cfg, { name: 'csv-worker' });
const worker = await startCsvWorker(rt);
onShutdown(rt.log, async () => {
  await worker.stop();
  await closeRuntime(rt);
});
