import type { AppConfig } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown } from '@lectern/runtime';
import { startApiServer } from '@lectern/api';
import { WORKERS } from './workers.js';

/** API and every worker in one process, for a laptop. Production runs each app on its own. */
export async function startAll(cfg: AppConfig): Promise<{ done: Promise<void> }> {
  const rt = await createRuntime(cfg, { name: 'lectern' });
  const workers: { name: string; handle: { stop(): Promise<void> } }[] = [];
  for (const w of WORKERS) workers.push({ name: w.name, handle: await w.start(rt) });
  const api = await startApiServer(rt);
  rt.log.info({ url: api.url, workers: workers.map((w) => w.name) }, 'lectern started');
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  onShutdown(rt.log, async () => {
    await api.close();
    await Promise.all(workers.map((w) => w.handle.stop()));
    await closeRuntime(rt);
    resolveDone();
  });
  return { done };
}
