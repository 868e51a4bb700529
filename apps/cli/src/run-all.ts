import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BaseConfig, DbConfig } from '@lectern/config';
import type { StartConfig } from './start-env.js';
import { ApiKeySchema, WorkspaceSchema } from '@lectern/db';
import { createKey, createWorkspace } from '@lectern/admin';
import { hashKey } from '@lectern/auth';
import { ensureInstallationSecretKey } from '@lectern/secrets';
import { closeRuntime, createRuntime, onShutdown, openStorage } from '@lectern/runtime';
import { startApiServer } from '@lectern/api';
import { runMigrate } from './commands/migrate.js';
import { WORKER_KIND_NAMES, workerKindsNamed } from '@lectern/job-registry';
import { logStarted, startKinds } from './worker-host.js';
import { print, withOrm } from './shared.js';

/**
 * The API and every worker kind in one process, for a laptop; production runs each kind on its own
 * (`lectern worker <kind>`). A kind that cannot start is reported unready (log, /readyz); the rest serve.
 */
export async function runAll(env: StartConfig): Promise<void> {
  // Production without WEBHOOK_SECRET_KEY stops here with the fix in the message.
  const cfg = await ensureInstallationSecretKey(env);
  await runMigrate(cfg);
  const creds = await demoCredentials(cfg);

  const rt = await createRuntime(cfg, { name: 'lectern' });
  const storage = await openStorage(cfg);
  const hosted = await startKinds(workerKindsNamed(WORKER_KIND_NAMES), process.env, { ...rt, storage });
  const deps = { ...rt, storage, cfg, kinds: hosted.readiness };
  const api = await startApiServer(deps);
  logStarted(rt.log, hosted, { url: api.url });
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  onShutdown(rt.log, async () => {
    await api.close();
    await hosted.stop();
    await closeRuntime(deps);
    resolveDone();
  });

  const unready = Object.entries(hosted.readiness()).filter(([, k]) => !k.ready);
  const base = `${cfg.PUBLIC_URL}/api/v1`;
  print(
    [
      '',
      `Lectern is running at ${cfg.PUBLIC_URL}`,
      ...unready.map(([name, k]) => `  NOT RUNNING:  the ${name} worker (${k.problem})`),
      `  API base:     ${base}`,
      `  API docs:     ${base}/docs`,
      `  Workspace:    ${creds.workspaceId} (Scale plan)`,
      `  API key:      ${creds.key}`,
      '',
      'Try:',
      `  curl -s ${base}/me -H 'Authorization: Bearer ${creds.key}'`,
      `  curl -s -X POST ${base}/identities -H 'Authorization: Bearer ${creds.key}' -H 'Content-Type: application/json' -d '{"externalId":"learner-1","name":"Ada"}'`,
      `  curl -s -X POST ${base}/courses -H 'Authorization: Bearer ${creds.key}' -H 'Content-Type: application/json' -d '{"title":"Fire safety","screens":[{"id":"s1","title":"Welcome","blocks":[{"id":"b1","type":"text","text":"Hello"}]}]}'`,
      `  curl -s -o course.zip '${base}/courses/<course id>/scorm?version=scorm12' -H 'Authorization: Bearer ${creds.key}'   # SCORM package`,
      `  curl -s -X POST ${base}/courses/<course id>/preview -H 'Authorization: Bearer ${creds.key}'   # a preview link to open in a browser`,
      '',
    ].join('\n'),
  );
  await done;
}

/** A demo workspace and write key, made on the first `start` and reused after (kept under DATA_DIR). */
async function demoCredentials(cfg: BaseConfig & DbConfig): Promise<{ workspaceId: string; key: string }> {
  const file = path.resolve(cfg.DATA_DIR, 'demo-credentials.json');
  return withOrm(cfg, async (em) => {
    try {
      const saved = JSON.parse(await readFile(file, 'utf8')) as { workspaceId: string; key: string };
      const ws = await em.findOne(WorkspaceSchema, { id: saved.workspaceId });
      const key = await em.findOne(ApiKeySchema, { hash: hashKey(saved.key), revokedAt: null });
      if (ws && key) return saved;
    } catch {
      // No saved credentials yet (or the database was reset): make new ones below.
    }
    const ws = await createWorkspace(em, 'Demo workspace', 'scale');
    const { key } = await createKey(em, ws.id, 'write');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ workspaceId: ws.id, key }, null, 2), { mode: 0o600 });
    return { workspaceId: ws.id, key };
  });
}
