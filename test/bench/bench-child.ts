/**
 * A service process (a worker, the API) spawned beside a bench, so the bench measures it as production runs it:
 * the parent half (`spawnBenchChild`) and the child half (`benchChildEnv`, `serveBench`), one protocol for every
 * `*-child.ts` here.
 *
 * The child is started with `node --import tsx <script>` and gets its configuration as JSON in BENCH_CHILD_CONFIG.
 * Over IPC it tells the parent `{ ready: true, rssMiB, …its own fields }` once it runs; answers `'cpu'` with
 * `{ cpuMicros }` (its CPU so far, user + system) and `'rss'` with `{ maxRssMiB }` (its peak resident set so far);
 * on `'stop'` (or SIGTERM, or the parent going away) it sends `{ peakRssMiB, rssMiB }`, stops gracefully and exits.
 * A child may serve calls of its own (`serveBench`'s `calls`): `{ call, op, args }` answered `{ reply, result }`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CONFIG_VAR = 'BENCH_CHILD_CONFIG';
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
// maxRSS is in kilobytes.
const peakRssMiB = () => Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;

export interface StopReport {
  peakRssMiB: number;
  rssMiB: number;
}

export interface BenchChild<Ready> {
  /** The child's ready message. */
  ready: Ready & { rssMiB: number };
  /** The child's CPU so far (µs, user + system). */
  cpuMicros(): Promise<number>;
  /** The child's peak resident set so far (MiB). */
  maxRssMiB(): Promise<number>;
  /** Stops the child gracefully (SIGKILL after 20 s); its last report, or undefined when it had exited already. */
  stop(): Promise<StopReport | undefined>;
  /** Calls one of the child's own operations (`serveBench`'s `calls`) and resolves with its result. */
  call<T>(op: string, args?: unknown): Promise<T>;
}

/**
 * Spawns `script` (a file of test/bench) with `config` and resolves once it is ready. `nodeArgs`: extra node flags
 * (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, not allowed in NODE_OPTIONS); `env`: extra variables.
 */
export async function spawnBenchChild<Ready = Record<string, unknown>>(
  script: string,
  config: Record<string, unknown>,
  opts: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<BenchChild<Ready>> {
  const file = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', file], {
    env: { ...process.env, ...opts.env, [CONFIG_VAR]: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  /** The next message carrying `key`. */
  const next = <T>(key: string) =>
    new Promise<T>((resolve) => {
      const on = (m: unknown) => {
        if (!m || typeof m !== 'object' || !(key in m)) return;
        child.off('message', on);
        resolve(m as T);
      };
      child.on('message', on);
    });
  const ready = await Promise.race([
    next<Ready & { rssMiB: number }>('ready'),
    exited.then(() => {
      throw new Error(`${script} exited (${child.exitCode}) before it was ready`);
    }),
  ]);
  const ask = async <T>(question: string, key: string) => {
    const answer = next<Record<string, T>>(key);
    child.send(question);
    return (await answer)[key];
  };
  let calls = 0;
  return {
    ready,
    call: <T>(op: string, args?: unknown) =>
      new Promise<T>((resolve) => {
        const id = ++calls;
        const on = (m: unknown) => {
          if (!m || typeof m !== 'object' || (m as { reply?: unknown }).reply !== id) return;
          child.off('message', on);
          resolve((m as { result: T }).result);
        };
        child.on('message', on);
        child.send({ call: id, op, args });
      }),
    cpuMicros: () => ask<number>('cpu', 'cpuMicros'),
    maxRssMiB: () => ask<number>('rss', 'maxRssMiB'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const report = next<StopReport>('peakRssMiB');
      child.send('stop');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const got = await Promise.race([report, exited.then(() => undefined)]);
      await exited;
      clearTimeout(killer);
      return got;
    },
  };
}

/** In the child: the configuration the bench passed, as environment strings; exits 2 when not run by a bench. */
export function benchChildEnv(who: string): Record<string, string> {
  const raw = process.env[CONFIG_VAR];
  if (!raw || !process.send) {
    process.stderr.write(`${who}: run by a bench (needs ${CONFIG_VAR} and IPC)\n`);
    process.exit(2);
  }
  return Object.fromEntries(
    Object.entries(JSON.parse(raw) as Record<string, unknown>)
      .filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => [k, String(v)]),
  );
}

/**
 * In the child, once it runs: answers the parent (see above) and tells it `ready` (with `fields`); `calls` are its
 * own operations, by name.
 */
export function serveBench(
  stop: () => Promise<void>,
  fields: Record<string, unknown> = {},
  calls: Record<string, (args: never) => unknown> = {},
): void {
  const send = (m: unknown) => process.send?.(m);
  let stopping: Promise<void> | undefined;
  const stopOnce = () =>
    (stopping ??= (async () => {
      try {
        send({ peakRssMiB: peakRssMiB(), rssMiB: mib(process.memoryUsage().rss) });
        await stop();
      } finally {
        process.exit(0);
      }
    })());
  process.on('message', (m) => {
    if (m && typeof m === 'object' && 'call' in m) {
      const { call, op, args } = m as { call: number; op: string; args: never };
      const handler = calls[op];
      if (!handler) throw new Error(`bench child: no call named ${op}`);
      void Promise.resolve(handler(args)).then((result) => send({ reply: call, result }));
      return;
    }
    if (m === 'stop') void stopOnce();
    if (m === 'rss') send({ maxRssMiB: peakRssMiB() });
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ cpuMicros: user + system });
    }
  });
  process.on('SIGTERM', () => void stopOnce());
  process.on('disconnect', () => void stopOnce());
  send({ ready: true, rssMiB: mib(process.memoryUsage().rss), ...fields });
}
