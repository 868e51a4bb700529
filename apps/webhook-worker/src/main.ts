import { loadConfig } from '../../../libs/config/src/index.js';
import { closeRuntime, createRuntime, onShutdown } from '../../../libs/runtime/src/index.js';
import { ensureWebhookSecretKey, startWebhookWorker } from '../../../libs/webhooks/src/index.js';

const cfg = await ensureWebhookSecretKey(loadConfig());
const rt = await createRuntime(cfg, { name: 'webhook-worker' });
const worker = await startWebhookWorker(rt);
onShutdown(rt.log, async () => {
  await worker.stop();
  await closeRuntime(rt);
});
