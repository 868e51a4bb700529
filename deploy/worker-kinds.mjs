// The worker kinds deploy/ runs, one Deployment + KEDA ScaledObject + PodDisruptionBudget each, all from the same
// image and command (`node dist/apps/cli/src/main.js worker <kind>`). `consumers` are the JetStream durables each
// kind pulls from (`<BUS_PREFIX>_<app>` on `<BUS_PREFIX>_<stream>`): KEDA scales on their pending messages.
// deploy/check-manifests.mjs reads the `app` names from the code (the `*_APP` constants and consumer specs in
// libs/) and fails when one here is not there, so a renamed durable cannot leave a ScaledObject watching nothing.
// Adding a kind: an entry here, a k8s/<kind>-worker.yaml, a compose service; docs/operations.md, "Adding a kind".
export const WORKER_KINDS = {
  csv: { component: 'csv-worker', consumers: [{ stream: 'JOBS', app: 'csv-worker' }] },
  scorm: {
    component: 'scorm-worker',
    consumers: [
      { stream: 'JOBS', app: 'scorm-export' },
      { stream: 'JOBS', app: 'scorm-import' },
    ],
  },
  certificate: {
    component: 'certificate-worker',
    consumers: [{ stream: 'JOBS', app: 'certificate-worker' }],
  },
  generation: {
    component: 'generation-worker',
    consumers: [{ stream: 'JOBS', app: 'generation-worker' }],
  },
  media: { component: 'media-worker', consumers: [{ stream: 'JOBS', app: 'media-worker' }] },
  // No stream: the outbox relay writes the deliveries, and the worker claims them from PostgreSQL.
  webhook: { component: 'webhook-worker', consumers: [] },
};
