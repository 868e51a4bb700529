import { loadConfig } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown } from '@lectern/runtime';
import { startApiServer } from './server.js';
import { ensureWebhookSecretKey } from '@lectern/webhooks';

const cfg = await ensureWebhookSecretKey(loadConfig());
const rt = await createRuntime(cfg, { name: 'api' });
const api = await startApiServer(rt);
rt.log.info({ url: api.url }, 'api listening');
onShutdown(rt.log, async () => {
  await api.close();
  await closeRuntime(rt);
});
