// Static checks of deploy/: every Kubernetes manifest and the compose file parse, carry the fields
// they need, point at things that exist (API probe paths, app entry points, config variables,
// ConfigMap/Secret/Deployment names), and follow the house rules (non-root, read-only root fs with
// /tmp writable, resources, graceful stop). Run through deploy/check.sh; no Docker engine needed.
//
// YAML parser: the `yaml` package when installed, else `js-yaml` (present through mocha).
// Schema validation against the Kubernetes OpenAPI types runs when `kubernetes-models` resolves.
import { readFile, readdir, access } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WORKER_KINDS } from './worker-kinds.mjs';

const deployDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(deployDir, '..');
const k8sDir = path.join(deployDir, 'k8s');

const problems = [];
const warnings = [];
const fail = (where, msg) => problems.push(`${where}: ${msg}`);
const warn = (where, msg) => warnings.push(`${where}: ${msg}`);
const exists = (p) =>
  access(p).then(
    () => true,
    () => false,
  );

async function yamlParser() {
  try {
    const yaml = await import('yaml');
    return {
      name: 'yaml',
      loadAll: (src) =>
        yaml.parseAllDocuments(src, { merge: true }).map((d) => {
          if (d.errors.length) throw new Error(d.errors.map((e) => e.message).join('; '));
          return d.toJS();
        }),
    };
  } catch {
    const jsyaml = await import('js-yaml');
    return { name: 'js-yaml', loadAll: (src) => jsyaml.loadAll(src) };
  }
}

/** Resolves YAML merge keys (`<<: *anchor`) whatever the parser did with them. */
function resolveMerges(v) {
  if (Array.isArray(v)) return v.map(resolveMerges);
  if (!v || typeof v !== 'object') return v;
  const out = {};
  if ('<<' in v) {
    for (const src of [v['<<']].flat().reverse()) Object.assign(out, resolveMerges(src));
  }
  for (const [k, val] of Object.entries(v)) if (k !== '<<') out[k] = resolveMerges(val);
  return out;
}

/**
 * Variable names the configuration schemas know: the keys of every zod env piece, wherever it lives (the shared
 * pieces in libs/config, the ones a library or app owns, e.g. WebhookEnv in libs/webhooks, PlayerEnv in apps/api).
 */
async function knownEnv() {
  const names = new Set(['NODE_OPTIONS']);
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') await walk(p);
      } else if (e.name.endsWith('.ts')) {
        const src = await readFile(p, 'utf8');
        for (const m of src.matchAll(
          /^\s+([A-Z][A-Z0-9_]+):\s*(z\b|bool\b|envBool\b|checkedBy\b|[A-Z][A-Za-z]+[,.])/gm,
        ))
          names.add(m[1]);
      }
    }
  };
  for (const top of ['libs', 'apps']) await walk(path.join(root, top));
  return names;
}

/** Paths the API serves that a probe may use: string literals of route paths in apps/api/src. */
async function apiSource() {
  const files = [];
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.ts')) files.push(p);
    }
  };
  await walk(path.join(root, 'apps/api/src'));
  return (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
}

const servesPath = (src, p) => new RegExp(`path:\\s*['"\`]${p.replace(/[/.]/g, '\\$&')}['"\`]`).test(src);

/** The worker HTTP server (libs/runtime/src/worker-http.ts): the paths it answers, compared as `path === '/x'`. */
const workerHttpFile = path.join(root, 'libs/runtime/src/worker-http.ts');
const workerServes = (src, p) => new RegExp(`path [!=]== ['"]${p.replace(/[/.]/g, '\\$&')}['"]`).test(src);

/** The worker kinds `lectern worker` knows (WORKER_KIND_NAMES in libs/job-registry/src/index.ts). */
const workerKindsFile = path.join(root, 'libs/job-registry/src/index.ts');
async function knownWorkerKinds() {
  const src = await readFile(workerKindsFile, 'utf8').catch(() => '');
  const list = /WORKER_KIND_NAMES = \[([^\]]*)\]/.exec(src)?.[1] ?? '';
  return new Set([...list.matchAll(/'([a-z][a-z0-9-]*)'/g)].map((m) => m[1]));
}

/** The kinds a container runs (`node dist/apps/cli/src/main.js worker <kind…>`), or null when it runs no worker host. */
function hostedKinds(command) {
  const args = (command ?? []).map(String);
  const i = args.indexOf('dist/apps/cli/src/main.js');
  return i >= 0 && args[i + 1] === 'worker' ? args.slice(i + 2).flatMap((a) => a.split(',')) : null;
}

/** A worker container names only kinds the registry knows, and at least one (or LECTERN_WORKERS does). */
function checkKinds(where, command, env, kinds) {
  const named = hostedKinds(command);
  if (named === null) return;
  const all = named.length
    ? named
    : String(env?.LECTERN_WORKERS ?? '')
        .split(',')
        .filter(Boolean);
  if (all.length === 0) fail(where, 'lectern worker names no kind (and no LECTERN_WORKERS)');
  for (const k of all)
    if (!kinds.has(k)) fail(where, `unknown worker kind "${k}"; the kinds are: ${[...kinds].join(', ')}`);
}
const WORKER_PORT = 9090;

/**
 * JetStream durable app names the code declares: `export const X_APP = '…'` constants and `app: '…'` in consumer
 * specs under libs/ (the durable is `<BUS_PREFIX>_<app>`, libs/bus busNames). The ScaledObjects must name these.
 */
async function codeDurableApps() {
  const apps = new Set();
  const walk = async (dir) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') await walk(p);
      } else if (e.name.endsWith('.ts')) {
        const src = await readFile(p, 'utf8');
        for (const m of src.matchAll(/(?:\b[A-Z_]+_APP\s*=|\bapp:)\s*'([a-z0-9-]+)'/g)) apps.add(m[1]);
      }
    }
  };
  await walk(path.join(root, 'libs'));
  return apps;
}

/** `['node', 'dist/apps/cli/src/main.js', 'worker', <kind>]` → kind; undefined for any other command. */
function workerKindOf(command) {
  const args = (command ?? []).map(String);
  const i = args.indexOf('dist/apps/cli/src/main.js');
  return i >= 0 && args[i + 1] === 'worker' ? args[i + 2] : undefined;
}

/** The per-kind entry points were folded into `lectern worker <kind>`: nothing in deploy/ may start one. */
const OLD_WORKER_ENTRY = /apps\/[a-z-]+-worker\//;

/** `node dist/apps/<app>/src/main.js` → does apps/<app>/src/main.ts exist? */
async function checkEntry(where, command) {
  const script = (command ?? []).find((a) => typeof a === 'string' && /^dist\/.+\.js$/.test(a));
  if (!script) return;
  const src = path.join(root, script.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
  if (!(await exists(src))) warn(where, `${script} has no source yet (${path.relative(root, src)} missing)`);
}

function labelsMatch(selector, labels) {
  return Object.entries(selector ?? {}).every(([k, v]) => labels?.[k] === v);
}

async function checkK8s(parser, env, api, workerSrc) {
  const files = (await readdir(k8sDir)).filter((f) => /\.ya?ml$/.test(f)).sort();
  const objects = [];
  for (const f of files) {
    let docs;
    try {
      docs = parser.loadAll(await readFile(path.join(k8sDir, f), 'utf8')).filter((d) => d != null);
    } catch (err) {
      fail(`k8s/${f}`, `does not parse: ${err.message}`);
      continue;
    }
    docs.forEach((doc, i) =>
      objects.push({
        file: f,
        where: `k8s/${f}#${i + 1} ${doc?.kind ?? '?'}/${doc?.metadata?.name ?? '?'}`,
        doc,
      }),
    );
  }

  const kustomization = objects.find((o) => o.doc.kind === 'Kustomization');
  const resources = objects.filter((o) => o !== kustomization);
  for (const { where, doc } of resources) {
    if (!doc.apiVersion) fail(where, 'apiVersion missing');
    if (!doc.kind) fail(where, 'kind missing');
    if (!doc.metadata?.name) fail(where, 'metadata.name missing');
    else if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(doc.metadata.name))
      fail(where, 'metadata.name is not a DNS-1123 label');
  }
  if (!kustomization) fail('k8s', 'kustomization.yaml missing');
  else {
    const listed = new Set(kustomization.doc.resources ?? []);
    for (const r of listed)
      if (!files.includes(r)) fail('k8s/kustomization.yaml', `lists ${r}, which does not exist`);
    for (const f of files) {
      if (f === 'kustomization.yaml') continue;
      const isSecret = f.startsWith('secret');
      if (isSecret && listed.has(f))
        fail('k8s/kustomization.yaml', `${f} holds placeholders and must not be applied`);
      if (!isSecret && !listed.has(f)) fail('k8s/kustomization.yaml', `${f} is not listed in resources`);
    }
  }

  const byKind = (kind) => resources.filter((o) => o.doc.kind === kind);
  const names = (kind) => new Set(byKind(kind).map((o) => o.doc.metadata?.name));
  const configMaps = names('ConfigMap');
  const secrets = names('Secret');
  const deployments = byKind('Deployment');

  // Only what a Lectern container reads through envFrom holds Lectern variables (nats.yaml's ConfigMap is a file).
  const envFromNames = new Set(
    [...deployments, ...byKind('Job')].flatMap((o) =>
      [
        ...(o.doc.spec?.template?.spec?.initContainers ?? []),
        ...(o.doc.spec?.template?.spec?.containers ?? []),
      ]
        .flatMap((c) => c.envFrom ?? [])
        .map((src) => src.configMapRef?.name ?? src.secretRef?.name),
    ),
  );
  for (const { where, doc } of [...byKind('ConfigMap'), ...byKind('Secret')]) {
    if (doc.kind === 'ConfigMap' && !envFromNames.has(doc.metadata?.name)) continue;
    for (const key of Object.keys({ ...doc.data, ...doc.stringData })) {
      if (!env.has(key)) fail(where, `${key} is not a variable libs/config knows (typo?)`);
    }
  }
  // Secrets in the repository are examples: every value must visibly be a placeholder.
  for (const { where, doc } of byKind('Secret')) {
    for (const [key, value] of Object.entries({ ...doc.data, ...doc.stringData })) {
      if (!String(value).includes('CHANGE-ME'))
        fail(where, `${key} must be a CHANGE-ME placeholder, never a real value`);
    }
  }

  for (const { where, doc } of [...deployments, ...byKind('Job')]) {
    const tpl = doc.spec?.template;
    const pod = tpl?.spec;
    if (!pod) {
      fail(where, 'spec.template.spec missing');
      continue;
    }
    const ann = tpl.metadata?.annotations ?? {};
    if (ann['prometheus.io/scrape'] === 'true') {
      const containerPorts = (pod.containers ?? []).flatMap((c) =>
        (c.ports ?? []).map((p) => String(p.containerPort)),
      );
      if (!containerPorts.includes(String(ann['prometheus.io/port'])))
        fail(where, `prometheus.io/port ${ann['prometheus.io/port']} is not a container port`);
      if (ann['prometheus.io/path'] !== '/metrics') fail(where, 'prometheus.io/path must be /metrics');
      if (!servesPath(api, '/metrics') || !workerServes(workerSrc, '/metrics'))
        fail(where, '/metrics is not served by apps/api and the worker HTTP server');
    }
    if (doc.kind === 'Deployment' && !labelsMatch(doc.spec.selector?.matchLabels, tpl.metadata?.labels)) {
      fail(where, 'selector.matchLabels does not match the pod template labels');
    }
    if (doc.kind === 'Deployment' && typeof pod.terminationGracePeriodSeconds !== 'number') {
      fail(where, 'terminationGracePeriodSeconds missing (graceful shutdown)');
    }
    if (pod.securityContext?.runAsNonRoot !== true)
      fail(where, 'pod securityContext.runAsNonRoot must be true');
    const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v]));
    for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
      const cw = `${where} container ${c.name}`;
      if (!c.image) fail(cw, 'image missing');
      if (!c.resources?.requests || !c.resources?.limits?.memory)
        fail(cw, 'resources.requests and limits.memory required');
      if (c.securityContext?.readOnlyRootFilesystem !== true) fail(cw, 'readOnlyRootFilesystem must be true');
      if (c.securityContext?.allowPrivilegeEscalation !== false)
        fail(cw, 'allowPrivilegeEscalation must be false');
      const tmp = (c.volumeMounts ?? []).find((m) => m.mountPath === '/tmp');
      if (!tmp || !volumes.get(tmp.name)?.emptyDir)
        fail(cw, 'needs an emptyDir mounted at /tmp (read-only root fs)');
      for (const src of c.envFrom ?? []) {
        if (src.configMapRef && !configMaps.has(src.configMapRef.name))
          fail(cw, `ConfigMap ${src.configMapRef.name} not defined`);
        if (src.secretRef && !secrets.has(src.secretRef.name))
          fail(cw, `Secret ${src.secretRef.name} not defined (not even in secret.example.yaml)`);
      }
      for (const e of c.env ?? [])
        if (!env.has(e.name)) fail(cw, `env ${e.name} is not a variable libs/config knows`);
      await checkEntry(cw, c.command);
      const ports = new Set((c.ports ?? []).flatMap((p) => [p.name, p.containerPort]));
      checkKinds(
        cw,
        c.command,
        Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value])),
        await knownWorkerKinds(),
      );
      if (OLD_WORKER_ENTRY.test((c.command ?? []).join(' ')))
        fail(cw, 'runs an apps/*-worker entry point; use node dist/apps/cli/src/main.js worker <kind>');
      const kind = workerKindOf(c.command);
      const isWorker = kind !== undefined || hostedKinds(c.command) !== null;
      if (kind !== undefined && !WORKER_KINDS[kind])
        fail(cw, `worker kind ${kind} is not in deploy/worker-kinds.mjs`);
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        const get = c[probe]?.httpGet;
        if (!get) continue;
        if (isWorker ? !workerServes(workerSrc, get.path) : !servesPath(api, get.path))
          fail(
            cw,
            `${probe} path ${get.path} is not served by ${isWorker ? 'the worker HTTP server' : 'apps/api'}`,
          );
        if (!ports.has(get.port)) fail(cw, `${probe} port ${get.port} is not a container port`);
      }
      if (isWorker && doc.kind === 'Deployment') {
        const port = (c.ports ?? []).find((p) => p.containerPort === WORKER_PORT);
        if (!port)
          fail(cw, `worker needs containerPort ${WORKER_PORT} (WORKER_HTTP_PORT: probes and /metrics)`);
        if (c.readinessProbe?.httpGet?.path !== '/readyz') fail(cw, 'worker readinessProbe must GET /readyz');
        if (c.livenessProbe?.httpGet?.path !== '/healthz') fail(cw, 'worker livenessProbe must GET /healthz');
      }
    }
    const command = (pod.containers ?? []).flatMap((c) => c.command ?? []).join(' ');
    if (doc.kind === 'Deployment' && command.includes('apps/api/')) {
      const main = pod.containers.find((c) => (c.command ?? []).join(' ').includes('apps/api/'));
      if (main.readinessProbe?.httpGet?.path !== '/readyz')
        fail(where, 'api readinessProbe must GET /readyz');
      if (main.livenessProbe?.httpGet?.path !== '/healthz')
        fail(where, 'api livenessProbe must GET /healthz');
    }
  }

  const workloads = [...deployments, ...byKind('StatefulSet')];
  const podLabels = workloads.map((o) => o.doc.spec?.template?.metadata?.labels ?? {});
  for (const { where, doc } of byKind('Service')) {
    const target = workloads.find((o) =>
      labelsMatch(doc.spec?.selector, o.doc.spec?.template?.metadata?.labels),
    );
    if (!target) fail(where, 'selector matches no Deployment or StatefulSet');
    const ports = new Set(
      (target?.doc.spec.template.spec.containers ?? []).flatMap((c) =>
        (c.ports ?? []).flatMap((p) => [p.name, p.containerPort]),
      ),
    );
    for (const p of doc.spec?.ports ?? [])
      if (target && !ports.has(p.targetPort))
        fail(where, `targetPort ${p.targetPort} is not a container port`);
  }
  const deploymentNamed = (name) => deployments.find((o) => o.doc.metadata?.name === name);
  const scaledBy = new Map();
  for (const { where, doc } of byKind('HorizontalPodAutoscaler')) {
    if (doc.apiVersion !== 'autoscaling/v2') fail(where, 'apiVersion must be autoscaling/v2');
    const ref = doc.spec?.scaleTargetRef;
    if (ref?.kind !== 'Deployment' || !deploymentNamed(ref.name))
      fail(where, `scaleTargetRef ${ref?.kind}/${ref?.name} not defined`);
    else scaledBy.set(ref.name, [...(scaledBy.get(ref.name) ?? []), where]);
    if (!(doc.spec?.minReplicas >= 1 && doc.spec?.minReplicas <= doc.spec?.maxReplicas))
      fail(where, 'needs 1 <= minReplicas <= maxReplicas');
    const metrics = doc.spec?.metrics ?? [];
    if (metrics.length === 0) fail(where, 'spec.metrics missing');
    for (const m of metrics) {
      const target = m.resource?.target;
      if (m.type !== 'Resource' || !m.resource?.name || !target?.type)
        fail(where, 'each metric needs type Resource, resource.name and resource.target.type');
      else if (target.type === 'Utilization' && !(target.averageUtilization > 0))
        fail(where, 'a Utilization target needs averageUtilization > 0');
      if (m.type === 'Resource' && m.resource?.name === 'cpu' && ref?.kind === 'Deployment') {
        const pod = deploymentNamed(ref.name)?.doc.spec?.template?.spec;
        if (pod && !(pod.containers ?? []).every((c) => c.resources?.requests?.cpu))
          fail(where, 'CPU utilization needs a CPU request on every container of the target');
      }
    }
  }

  // KEDA: one ScaledObject per worker kind, on the kind's durable consumers, named as the code names them.
  const lecternConfig =
    byKind('ConfigMap').find((o) => o.doc.metadata?.name === 'lectern-config')?.doc.data ?? {};
  const prefix = lecternConfig.BUS_PREFIX ?? 'lectern';
  const services = byKind('Service');
  const statefulSets = byKind('StatefulSet');
  const codeApps = await codeDurableApps();
  // The registry's kinds and deploy/worker-kinds.mjs name the same set: a kind added to one is deployed by the other.
  const registryKinds = await knownWorkerKinds();
  for (const kind of registryKinds)
    if (!WORKER_KINDS[kind])
      fail('deploy/worker-kinds.mjs', `worker kind ${kind} of the registry is not deployed`);
  for (const kind of Object.keys(WORKER_KINDS))
    if (registryKinds.size > 0 && !registryKinds.has(kind))
      fail('deploy/worker-kinds.mjs', `${kind} is not a worker kind of the registry (WORKER_KIND_NAMES)`);
  for (const [kind, spec] of Object.entries(WORKER_KINDS))
    for (const c of spec.consumers)
      if (!codeApps.has(c.app))
        fail('deploy/worker-kinds.mjs', `${kind}: no durable app '${c.app}' in libs/ (renamed in the code?)`);
  const TRIGGER_KEYS = ['natsServerMonitoringEndpoint', 'account', 'stream', 'consumer', 'lagThreshold'];
  const scaledObjects = byKind('ScaledObject');
  for (const { where, doc } of scaledObjects) {
    if (doc.apiVersion !== 'keda.sh/v1alpha1') fail(where, 'apiVersion must be keda.sh/v1alpha1');
    const ref = doc.spec?.scaleTargetRef;
    const target = deploymentNamed(ref?.name);
    if ((ref?.kind ?? 'Deployment') !== 'Deployment' || !target) {
      fail(where, `scaleTargetRef ${ref?.kind ?? 'Deployment'}/${ref?.name} not defined`);
      continue;
    }
    scaledBy.set(ref.name, [...(scaledBy.get(ref.name) ?? []), where]);
    if (target.doc.spec?.replicas !== undefined)
      fail(
        target.where,
        'sets spec.replicas although a ScaledObject owns the count (every apply would reset it)',
      );
    const { minReplicaCount: min, maxReplicaCount: max } = doc.spec ?? {};
    if (!(Number.isInteger(min) && Number.isInteger(max) && min >= 0 && min <= max && max >= 1))
      fail(where, 'needs integer minReplicaCount <= maxReplicaCount (max >= 1)');
    const kind = workerKindOf(target.doc.spec?.template?.spec?.containers?.[0]?.command);
    const want = WORKER_KINDS[kind];
    if (!want) {
      fail(where, `targets ${ref.name}, which runs no worker kind of deploy/worker-kinds.mjs`);
      continue;
    }
    const triggers = doc.spec?.triggers ?? [];
    const nats = triggers.filter((t) => t.type === 'nats-jetstream');
    for (const t of nats) {
      const md = t.metadata ?? {};
      for (const k of TRIGGER_KEYS)
        if (md[k] === undefined || md[k] === '') fail(where, `trigger metadata.${k} missing`);
      if (!(Number(md.lagThreshold) > 0)) fail(where, 'lagThreshold must be a positive number');
      const [host, port] = String(md.natsServerMonitoringEndpoint ?? '').split(':');
      const svc = services.find(
        (o) => host === o.doc.metadata?.name || host?.startsWith(`${o.doc.metadata?.name}.`),
      );
      if (!svc)
        fail(where, `natsServerMonitoringEndpoint ${md.natsServerMonitoringEndpoint} names no Service here`);
      else {
        if (svc.doc.spec?.clusterIP !== 'None')
          fail(
            where,
            `${svc.doc.metadata.name} must be headless: KEDA queries the stream leader's pod through it`,
          );
        if (!(svc.doc.spec?.ports ?? []).some((p) => String(p.port) === port))
          fail(where, `Service ${svc.doc.metadata.name} has no port ${port} (the NATS monitoring port)`);
      }
    }
    const got = nats.map((t) => `${t.metadata?.stream} ${t.metadata?.consumer}`).sort();
    const expected = want.consumers.map((c) => `${prefix}_${c.stream} ${prefix}_${c.app}`).sort();
    if (JSON.stringify(got) !== JSON.stringify(expected))
      fail(
        where,
        `nats-jetstream triggers [${got.join(', ')}] must be exactly [${expected.join(', ')}] (worker ${kind})`,
      );
  }
  for (const [name, by] of scaledBy)
    if (by.length > 1)
      fail(`Deployment/${name}`, `scaled by ${by.length} autoscalers (${by.join('; ')}); keep one`);

  for (const { where, doc } of statefulSets) {
    const tpl = doc.spec?.template;
    if (
      !labelsMatch(doc.spec?.selector?.matchLabels, tpl?.metadata?.labels) ||
      !doc.spec?.selector?.matchLabels
    )
      fail(where, 'selector.matchLabels does not match the pod template labels');
    const headless = services.find((o) => o.doc.metadata?.name === doc.spec?.serviceName);
    if (!headless) fail(where, `serviceName ${doc.spec?.serviceName} is not a Service here`);
    else if (headless.doc.spec?.clusterIP !== 'None')
      fail(where, `Service ${doc.spec.serviceName} must be headless`);
    if (!(tpl?.spec?.containers ?? []).length) fail(where, 'spec.template.spec.containers missing');
    for (const c of tpl?.spec?.containers ?? []) {
      if (!c.image) fail(`${where} container ${c.name}`, 'image missing');
      if (!c.resources?.requests || !c.resources?.limits?.memory)
        fail(`${where} container ${c.name}`, 'resources.requests and limits.memory required');
    }
    if (typeof tpl?.spec?.terminationGracePeriodSeconds !== 'number')
      fail(where, 'terminationGracePeriodSeconds missing (graceful shutdown)');
    if (tpl?.spec?.securityContext?.runAsNonRoot !== true)
      fail(where, 'pod securityContext.runAsNonRoot must be true');
    const mounts = new Set(
      (tpl?.spec?.containers ?? []).flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name)),
    );
    for (const vct of doc.spec?.volumeClaimTemplates ?? [])
      if (!mounts.has(vct.metadata?.name))
        fail(where, `volumeClaimTemplate ${vct.metadata?.name} is mounted nowhere`);
  }
  // The NATS cluster: JetStream on, a route to every pod, and BUS_REPLICAS no larger than the node count.
  const natsSts = statefulSets.find((o) =>
    /(^|\/)nats(:|$)/.test(o.doc.spec?.template?.spec?.containers?.[0]?.image?.split(':')[0] ?? ''),
  );
  if (!natsSts) fail('k8s', 'no NATS StatefulSet (the JetStream cluster)');
  else {
    const { where, doc } = natsSts;
    const n = doc.spec?.replicas ?? 1;
    if (n < 3 || n % 2 === 0)
      fail(where, 'a JetStream cluster needs an odd number of nodes, at least 3 (quorum)');
    const cmName = (doc.spec.template.spec.volumes ?? []).find((v) => v.configMap)?.configMap.name;
    const conf =
      byKind('ConfigMap').find((o) => o.doc.metadata?.name === cmName)?.doc.data?.['nats.conf'] ?? '';
    if (!/jetstream\s*\{/.test(conf)) fail(where, 'nats.conf has no jetstream block');
    if (!/cluster\s*\{/.test(conf)) fail(where, 'nats.conf has no cluster block');
    for (let i = 0; i < n; i++) {
      const route = `${doc.metadata.name}-${i}.${doc.spec.serviceName}.`;
      if (!conf.includes(route)) fail(where, `nats.conf has no cluster route to ${route}…`);
    }
    const replicas = Number(lecternConfig.BUS_REPLICAS ?? 1);
    if (!(replicas >= 1 && replicas <= n))
      fail('lectern-config', `BUS_REPLICAS ${replicas} must be 1..${n} (the NATS nodes)`);
    if (replicas < Math.min(3, n))
      fail('lectern-config', `BUS_REPLICAS ${replicas}: set ${Math.min(3, n)} on the cluster`);
    const client = `${doc.spec.serviceName}.`;
    if (!String(lecternConfig.NATS_URL ?? '').includes(client))
      warn(
        'lectern-config',
        `NATS_URL ${lecternConfig.NATS_URL} is not the StatefulSet's Service (${client}…)`,
      );
  }

  const pdbs = byKind('PodDisruptionBudget');
  for (const { where, doc } of pdbs) {
    if (doc.apiVersion !== 'policy/v1') fail(where, 'apiVersion must be policy/v1');
    if ((doc.spec?.minAvailable === undefined) === (doc.spec?.maxUnavailable === undefined))
      fail(where, 'set exactly one of minAvailable and maxUnavailable');
    if (
      !podLabels.some((l) => labelsMatch(doc.spec?.selector?.matchLabels, l)) ||
      !doc.spec?.selector?.matchLabels
    )
      fail(where, 'selector matches no Deployment or StatefulSet');
  }
  for (const o of workloads) {
    const labels = o.doc.spec?.template?.metadata?.labels ?? {};
    if (!pdbs.some((p) => labelsMatch(p.doc.spec?.selector?.matchLabels, labels)))
      fail(o.where, 'no PodDisruptionBudget selects its pods');
  }
  for (const [kind, spec] of Object.entries(WORKER_KINDS)) {
    const dep = deployments.find(
      (o) => workerKindOf(o.doc.spec?.template?.spec?.containers?.[0]?.command) === kind,
    );
    if (!dep) fail('k8s', `worker kind ${kind} has no Deployment running \`worker ${kind}\``);
    else if (dep.doc.spec?.template?.metadata?.labels?.['app.kubernetes.io/component'] !== spec.component)
      fail(dep.where, `pods of worker ${kind} must carry app.kubernetes.io/component: ${spec.component}`);
    else if (!scaledObjects.some((o) => o.doc.spec?.scaleTargetRef?.name === dep.doc.metadata.name))
      fail(dep.where, `worker kind ${kind} has no ScaledObject`);
  }
  const apiDeployment = deployments.find((o) =>
    (o.doc.spec?.template?.spec?.containers ?? []).some((c) =>
      (c.command ?? []).join(' ').includes('apps/api/'),
    ),
  );
  if (
    apiDeployment &&
    !byKind('HorizontalPodAutoscaler').some(
      (o) => o.doc.spec?.scaleTargetRef?.name === apiDeployment.doc.metadata.name,
    )
  )
    fail(apiDeployment.where, 'the API has no HorizontalPodAutoscaler');
  for (const want of [
    'Deployment',
    'Service',
    'Job',
    'ConfigMap',
    'Secret',
    'HorizontalPodAutoscaler',
    'PodDisruptionBudget',
    'StatefulSet',
    'ScaledObject',
  ]) {
    if (byKind(want).length === 0) fail('k8s', `no ${want} defined`);
  }

  // Schema validation against the Kubernetes OpenAPI types, when the package is there.
  let validated = 0;
  try {
    await import('kubernetes-models/v1');
    for (const { where, doc } of resources) {
      const group = doc.apiVersion;
      const mod = await import(`kubernetes-models/${group}`).catch(() => null);
      const Model = mod?.[doc.kind];
      if (!Model) {
        warn(where, `no kubernetes-models type for ${group} ${doc.kind}`);
        continue;
      }
      try {
        new Model(doc).validate();
        validated++;
      } catch (err) {
        fail(where, `schema: ${err.message}`);
      }
    }
    console.log(`k8s: ${validated} object(s) validated against the Kubernetes schemas (kubernetes-models)`);
  } catch {
    console.log('k8s: schema validation skipped (install kubernetes-models to enable it)');
  }
  console.log(`k8s: ${resources.length} object(s) in ${files.length} file(s) checked with ${parser.name}`);
}

async function checkCompose(parser, env, api, workerSrc) {
  const file = path.join(deployDir, 'docker-compose.yml');
  let doc;
  try {
    [doc] = parser.loadAll(await readFile(file, 'utf8'));
    doc = resolveMerges(doc);
  } catch (err) {
    fail('docker-compose.yml', `does not parse: ${err.message}`);
    return;
  }
  const services = doc.services ?? {};
  for (const want of [
    'postgres',
    'nats',
    'minio',
    'minio-init',
    'migrate',
    'api',
    'webhook-worker',
    'csv-worker',
  ]) {
    if (!services[want]) fail('docker-compose.yml', `service ${want} missing`);
  }
  if (!/-js\b/.test(JSON.stringify(services.nats?.command ?? '')))
    fail('compose nats', 'must run with -js (JetStream)');
  for (const [name, svc] of Object.entries(services)) {
    const where = `compose ${name}`;
    if (!svc.image && !svc.build) fail(where, 'image or build required');
    if (!String(svc.image ?? '').startsWith('${LECTERN_IMAGE') && !svc.build) continue;
    // A Lectern app service.
    const vars = svc.environment ?? {};
    for (const key of Object.keys(vars))
      if (!env.has(key)) fail(where, `environment ${key} is not a variable libs/config knows`);
    if (vars.NODE_ENV !== 'production') fail(where, 'NODE_ENV must be production');
    if (!/^\$\{WEBHOOK_SECRET_KEY:\?/.test(String(vars.WEBHOOK_SECRET_KEY)))
      fail(where, 'WEBHOOK_SECRET_KEY must be required (${WEBHOOK_SECRET_KEY:?...})');
    if (svc.read_only !== true) fail(where, 'read_only root fs expected');
    if (name !== 'migrate' && !svc.stop_grace_period)
      fail(where, 'stop_grace_period missing (graceful shutdown)');
    await checkEntry(where, svc.command);
    checkKinds(where, svc.command, svc.environment, await knownWorkerKinds());
  }
  const hc = JSON.stringify(services.api?.healthcheck?.test ?? '');
  const m = /127\.0\.0\.1:8080(\/[a-z]+)/.exec(hc);
  if (!m) fail('compose api', 'healthcheck must call the API');
  else if (m[1] !== '/readyz' || !servesPath(api, m[1]))
    fail('compose api', `healthcheck path ${m[1]} must be /readyz, served by apps/api`);
  if ((services.api?.deploy?.replicas ?? 1) < 2) fail('compose api', 'expected 2 replicas');
  // One service per worker kind, from the same image and `worker <kind>` command, with its probe server checked.
  for (const [kind, spec] of Object.entries(WORKER_KINDS)) {
    const found = Object.entries(services).filter(([, svc]) => workerKindOf(svc.command) === kind);
    if (found.length !== 1) {
      fail(
        'docker-compose.yml',
        `worker kind ${kind}: expected one service running \`worker ${kind}\`, found ${found.length}`,
      );
      continue;
    }
    const [name, svc] = found[0];
    if (name !== spec.component)
      fail(`compose ${name}`, `the service of worker ${kind} is named ${spec.component}`);
    const wm = new RegExp(`127\\.0\\.0\\.1:${WORKER_PORT}(/[a-z]+)`).exec(
      JSON.stringify(svc.healthcheck?.test ?? ''),
    );
    if (!wm) fail(`compose ${name}`, `healthcheck must call the worker HTTP server on ${WORKER_PORT}`);
    else if (wm[1] !== '/readyz' || !workerServes(workerSrc, wm[1]))
      fail(`compose ${name}`, `healthcheck path ${wm[1]} must be /readyz, served by the worker HTTP server`);
    if (String(svc.environment?.WORKER_HTTP_PORT) !== String(WORKER_PORT))
      fail(`compose ${name}`, `WORKER_HTTP_PORT must be ${WORKER_PORT} (the healthcheck calls it)`);
  }
  for (const [name, svc] of Object.entries(services)) {
    if (OLD_WORKER_ENTRY.test(JSON.stringify(svc.command ?? '')))
      fail(
        `compose ${name}`,
        'runs an apps/*-worker entry point; use node dist/apps/cli/src/main.js worker <kind>',
      );
    const kind = workerKindOf(svc.command);
    if (kind !== undefined && !WORKER_KINDS[kind])
      fail(`compose ${name}`, `worker kind ${kind} is not in deploy/worker-kinds.mjs`);
  }
  console.log(`compose: ${Object.keys(services).length} service(s) checked`);
}

const parser = await yamlParser();
const env = await knownEnv();
const api = await apiSource();
const workerSrc = await readFile(workerHttpFile, 'utf8').catch(() => '');
for (const p of ['/healthz', '/readyz', '/metrics']) {
  if (!servesPath(api, p)) fail('apps/api', `does not serve ${p}`);
  if (!workerServes(workerSrc, p)) fail('libs/runtime/src/worker-http.ts', `does not serve ${p}`);
}
await checkK8s(parser, env, api, workerSrc);
await checkCompose(parser, env, api, workerSrc);
// The image builds every process's entry into dist; the per-kind worker entry points are gone.
const dockerfile = await readFile(path.join(deployDir, 'Dockerfile'), 'utf8');
if (OLD_WORKER_ENTRY.test(dockerfile)) fail('Dockerfile', 'references an apps/*-worker entry point');
if (!dockerfile.includes('test -f dist/apps/cli/src/main.js'))
  fail('Dockerfile', 'the build must check dist/apps/cli/src/main.js (every worker runs from it)');
for (const w of warnings) console.log(`warning: ${w}`);
for (const p of problems) console.log(`FAIL: ${p}`);
console.log(problems.length ? `${problems.length} problem(s)` : 'deploy manifests: ok');
process.exit(problems.length ? 1 : 0);
