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

  for (const { where, doc } of [...byKind('ConfigMap'), ...byKind('Secret')]) {
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
      const isWorker = hostedKinds(c.command) !== null;
      checkKinds(
        cw,
        c.command,
        Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value])),
        await knownWorkerKinds(),
      );
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

  const podLabels = deployments.map((o) => o.doc.spec?.template?.metadata?.labels ?? {});
  for (const { where, doc } of byKind('Service')) {
    const target = deployments.find((o) =>
      labelsMatch(doc.spec?.selector, o.doc.spec?.template?.metadata?.labels),
    );
    if (!target) fail(where, 'selector matches no Deployment');
    const ports = new Set(
      (target?.doc.spec.template.spec.containers ?? []).flatMap((c) =>
        (c.ports ?? []).flatMap((p) => [p.name, p.containerPort]),
      ),
    );
    for (const p of doc.spec?.ports ?? [])
      if (target && !ports.has(p.targetPort))
        fail(where, `targetPort ${p.targetPort} is not a container port`);
  }
  for (const { where, doc } of byKind('HorizontalPodAutoscaler')) {
    const ref = doc.spec?.scaleTargetRef;
    if (ref?.kind !== 'Deployment' || !deployments.some((o) => o.doc.metadata.name === ref.name))
      fail(where, `scaleTargetRef ${ref?.kind}/${ref?.name} not defined`);
    if (!(doc.spec?.minReplicas <= doc.spec?.maxReplicas)) fail(where, 'minReplicas must be <= maxReplicas');
  }
  for (const { where, doc } of byKind('PodDisruptionBudget')) {
    if (!podLabels.some((l) => labelsMatch(doc.spec?.selector?.matchLabels, l)))
      fail(where, 'selector matches no Deployment');
  }
  for (const want of [
    'Deployment',
    'Service',
    'Job',
    'ConfigMap',
    'Secret',
    'HorizontalPodAutoscaler',
    'PodDisruptionBudget',
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
  for (const name of ['webhook-worker', 'csv-worker']) {
    const wm = new RegExp(`127\\.0\\.0\\.1:${WORKER_PORT}(/[a-z]+)`).exec(
      JSON.stringify(services[name]?.healthcheck?.test ?? ''),
    );
    if (!wm) fail(`compose ${name}`, `healthcheck must call the worker HTTP server on ${WORKER_PORT}`);
    else if (wm[1] !== '/readyz' || !workerServes(workerSrc, wm[1]))
      fail(`compose ${name}`, `healthcheck path ${wm[1]} must be /readyz, served by the worker HTTP server`);
    if (String(services[name]?.environment?.WORKER_HTTP_PORT) !== String(WORKER_PORT))
      fail(`compose ${name}`, `WORKER_HTTP_PORT must be ${WORKER_PORT} (the healthcheck calls it)`);
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
for (const w of warnings) console.log(`warning: ${w}`);
for (const p of problems) console.log(`FAIL: ${p}`);
console.log(problems.length ? `${problems.length} problem(s)` : 'deploy manifests: ok');
process.exit(problems.length ? 1 : 0);
