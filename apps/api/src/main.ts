import { loadConfig } from '../../../libs/config/src/index.js';
import { closeRuntime, createRuntime, onShutdown } from '../../../libs/runtime/src/index.js';
import { startApiServer } from './server.js';
import { ensureWebhookSecretKey } from '../../../libs/webhooks/src/index.js';

const cfg = await ensureWebhookSecretKey(loadConfig());
const rt = await createRuntime(cfg, { name: 'api' });
const api = await startApiServer(rt);
rt.log.info({ url: api.url }, 'api listening');
onShutdown(rt.log, async () => {
  await api.close();
  await closeRuntime(rt);
});
