import {
  ApiEnv,
  BaseEnv,
  BusEnv,
  CertificateEnv,
  DbEnv,
  JobsEnv,
  GenerationEnv,
  MediaEnv,
  MetricsEnv,
  StorageEnv,
  parseEnv,
} from '@lectern/config';
import { PlayerEnv } from './player-env.js';
import { closeRuntime, createRuntime, onShutdown, openStorage } from '@lectern/runtime';
import { ensureInstallationSecretKey } from '@lectern/secrets';
import { WebhookEnv } from '@lectern/webhooks';
import { startApiServer } from './server.js';

// The API reads its HTTP settings, the job deadlines and the webhook settings, plus what its connections need.
const env = parseEnv(
  [
    BaseEnv,
    DbEnv,
    BusEnv,
    StorageEnv,
    MetricsEnv,
    ApiEnv,
    JobsEnv,
    GenerationEnv,
    MediaEnv,
    WebhookEnv,
    PlayerEnv,
    CertificateEnv,
  ],
  process.env,
);
const cfg = await ensureInstallationSecretKey(env);
const rt = await createRuntime(cfg, { name: 'api' });
const storage = await openStorage(cfg);
const api = await startApiServer({ ...rt, storage, cfg });
rt.log.info({ url: api.url }, 'api listening');
onShutdown(rt.log, async () => {
  await api.close();
  await closeRuntime({ ...rt, storage });
});
