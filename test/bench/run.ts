/**
 * Benchmark runner (`make bench`, or `node --import tsx test/bench/run.ts [name ...]`).
 *
 * Imports every `test/bench/*.bench.ts` but the opt-in ones (`soak`), or only those named on the
 * command line (with or without the `.bench.ts` suffix), runs them one after another around ONE per-run database,
 * bus prefix and object store (`setupRun()`/`teardownRun()` from test/support/context.ts),
 * prints a table per bench and writes everything to `test/bench/results/<timestamp>.json`.
 *
 * A bench module exports `async function run(): Promise<Record<string, unknown>>`; nested
 * objects are flattened into dotted metric names for the table and kept nested in the JSON.
 * Benchmarks report numbers; they never assert on timing. The exit code is non-zero only
 * when a bench threw (or none matched the names given).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setupRun, teardownRun } from '../support/context.js';

type BenchFn = () => Promise<Record<string, unknown>>;

interface BenchOutcome {
  name: string;
  file: string;
  ok: boolean;
  startedAt: string;
  durationMs: number;
  /** process.resourceUsage().maxRSS at the end of this bench: the process's peak so far (MiB). */
  peakRssMiB: number;
  /** Resident set size when the bench started (MiB), to tell this bench's growth from earlier ones. */
  rssAtStartMiB: number;
  results?: Record<string, unknown>;
  error?: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const OPT_IN = new Set(['soak']);
const SUFFIX = '.bench.ts';
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function findBenches(names: string[]): Promise<{ name: string; file: string }[]> {
  const all = (await readdir(here))
    .filter((f) => f.endsWith(SUFFIX))
    .sort()
    .map((f) => ({ name: f.slice(0, -SUFFIX.length), file: path.join(here, f) }));
  // Long-running benches run only when named (`make soak`), so `make bench` stays a few minutes.
  if (names.length === 0) return all.filter((b) => !OPT_IN.has(b.name));
  const wanted = names.map((n) =>
    path
      .basename(n)
      .replace(/\.bench(\.ts)?$/, '')
      .replace(/\.ts$/, ''),
  );
  const unknown = wanted.filter((n) => !all.some((b) => b.name === n));
  if (unknown.length) {
    throw new Error(
      `no bench named ${unknown.join(', ')}; available: ${all.map((b) => b.name).join(', ') || '(none)'}`,
    );
  }
  return all.filter((b) => wanted.includes(b.name));
}

/** { a: { b: 1, c: [1, 2] } } → [['a.b', 1], ['a.c', '[1,2]']] */
function flatten(value: unknown, prefix = ''): [string, unknown][] {
  if (value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return [[prefix, '{}']];
    return entries.flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
  }
  return [[prefix, value]];
}

function show(v: unknown): string {
  if (typeof v === 'number')
    return Number.isInteger(v)
      ? v.toLocaleString('en-US')
      : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  if (typeof v === 'string') return v;
  return JSON.stringify(v) ?? String(v);
}

function table(rows: [string, string][]): string {
  const w0 = Math.max(6, ...rows.map((r) => r[0].length));
  const w1 = Math.max(5, ...rows.map((r) => r[1].length));
  const line = `+${'-'.repeat(w0 + 2)}+${'-'.repeat(w1 + 2)}+`;
  const fmt = (a: string, b: string) => `| ${a.padEnd(w0)} | ${b.padStart(w1)} |`;
  return [line, fmt('metric', 'value'), line, ...rows.map(([a, b]) => fmt(a, b)), line].join('\n');
}

function report(o: BenchOutcome): string {
  const head = `\n== ${o.name} (${o.ok ? 'ok' : 'FAILED'}, ${(o.durationMs / 1000).toFixed(1)} s, peak RSS ${o.peakRssMiB} MiB) ==`;
  if (!o.ok) return `${head}\n${o.error}`;
  const rows = flatten(o.results ?? {}).map(([k, v]) => [k, show(v)] as [string, string]);
  return `${head}\n${table(rows)}`;
}

async function main(argv: string[]): Promise<number> {
  const benches = await findBenches(argv);
  if (benches.length === 0) {
    process.stderr.write('no benchmarks found under test/bench (*.bench.ts)\n');
    return 1;
  }
  const started = new Date();
  const loadAverageAtStart = os.loadavg().map((n) => Math.round(n * 100) / 100);
  const outcomes: BenchOutcome[] = [];
  process.stdout.write(
    `running ${benches.map((b) => b.name).join(', ')} on ${os.cpus().length} CPU(s), Node ${process.version}, load average ${loadAverageAtStart.join(' ')}\n`,
  );
  const ctx = await setupRun();
  try {
    for (const b of benches) {
      const rssAtStartMiB = mib(process.memoryUsage().rss);
      const t0 = performance.now();
      const startedAt = new Date().toISOString();
      process.stdout.write(`\n-> ${b.name} ...\n`);
      let outcome: Omit<BenchOutcome, 'durationMs' | 'peakRssMiB'>;
      try {
        const mod = (await import(pathToFileURL(b.file).href)) as { run?: BenchFn };
        if (typeof mod.run !== 'function') throw new Error(`${b.file} exports no run() function`);
        const results = await mod.run();
        outcome = {
          name: b.name,
          file: path.relative(process.cwd(), b.file),
          ok: true,
          startedAt,
          rssAtStartMiB,
          results,
        };
      } catch (err) {
        outcome = {
          name: b.name,
          file: path.relative(process.cwd(), b.file),
          ok: false,
          startedAt,
          rssAtStartMiB,
          error: (err as Error)?.stack ?? String(err),
        };
      }
      const full: BenchOutcome = {
        ...outcome,
        durationMs: Math.round(performance.now() - t0),
        // maxRSS is in kilobytes.
        peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
      };
      outcomes.push(full);
      process.stdout.write(`${report(full)}\n`);
    }
  } finally {
    await teardownRun().catch((err: unknown) => process.stderr.write(`teardown failed: ${String(err)}\n`));
  }

  const dir = path.join(here, 'results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  const doc = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    args: argv,
    runId: ctx.runId,
    machine: {
      node: process.version,
      platform: `${os.platform()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
      /** 1/5/15-minute load averages when the run started: other work on a shared machine skews numbers. */
      loadAverageAtStart,
    },
    benches: outcomes,
  };
  await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`\nresults written to ${path.relative(process.cwd(), file)}\n`);
  return outcomes.every((o) => o.ok) ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
