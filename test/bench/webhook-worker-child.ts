/**
 * The webhook worker in a process of its own, for the `productionShape` runs of webhooks.bench.ts (the bench-child
 * protocol of bench-child.ts).
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime } from '@lectern/runtime';
import { WebhookEnv, startWebhookWorker } from '@lectern/webhooks';
import { benchChildEnv, serveBench } from './bench-child.js';

const env = benchChildEnv('webhook-worker-child');
// What `lectern worker webhook` reads (its probe server is not started here).
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, MetricsEnv, WebhookEnv], env);
const rt = await createRuntime(cfg, { name: 'bench-webhook-worker-child', provision: false });
// BENCH_WEBHOOK_DNS_CACHE_MS (diagnostics): how long the worker keeps a host name's addresses; 0 resolves every time.
const dnsCacheMs = process.env.BENCH_WEBHOOK_DNS_CACHE_MS;
const worker = await startWebhookWorker(
  { ...rt, cfg },
  dnsCacheMs === undefined ? {} : { dnsCacheMs: Number(dnsCacheMs) },
);
serveBench(async () => {
  await worker.stop();
  await closeRuntime(rt);
});
