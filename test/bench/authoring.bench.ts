import { closeRuntime } from '@lectern/runtime';
import { boundQuery } from '@lectern/db';
import { UpdateCourse } from '@lectern/contracts';
import type { RequestBody } from '@lectern/client';
import { validateScreens } from '@lectern/courses';
import { parseCourseCsv, startCsvWorker } from '@lectern/csv-import';
import { makeWorkspace, startTestApp, testRuntime } from '../support/context.js';
import { call, clientFor } from '../support/http.js';
import { csvText } from '../support/csv.js';

/**
 * The authoring benchmark (issue 3):
 *  (a) PATCH /courses/:id replacing the screens of a 30-screen × 10-block course, one
 *      request at a time: median and p99 latency, against validating the same body
 *      in-process with the same zod schema and `validateScreens` (the ratio is what the
 *      HTTP, auth, database and JSON round trip add to validation);
 *  (b) POST /courses/import/csv of 2,000 rows end to end (HTTP → object store → bus →
 *      csv worker → DB → done notice → reply) against `parseCourseCsv` on the same file
 *      in-process (the ratio is the pipeline's overhead over parsing).
 * Numbers only: nothing here asserts on timing. Tunables (environment):
 *   BENCH_PATCH_RUNS (200)  PATCHes measured, after 20 warm-up requests
 *   BENCH_CSV_RUNS (10)     imports measured, after 2 warm-up imports
 */

const PATCH_RUNS = Number(process.env.BENCH_PATCH_RUNS ?? 200);
const CSV_RUNS = Number(process.env.BENCH_CSV_RUNS ?? 10);

/** Ten block kinds a real course mixes, all readable CSV rows. */
const ROW_KINDS: string[][] = [
  ['heading', 'Section heading', '', '', ''],
  [
    'text',
    'A paragraph of reading material, long enough to look like a real one, with a comma or two, and a full stop.',
    '',
    '',
    '',
  ],
  ['quiz_single_choice', 'Which one is right?', 'Alpha|Beta|Gamma|Delta', '2', 'Beta, because it is.'],
  ['quiz_multiple_choice', 'Pick the even numbers', '1|2|3|4', '2|4', 'Two and four.'],
  ['quiz_true_false', 'The sky is blue on a clear day.', '', 'true', 'Rayleigh scattering.'],
  ['fill_in_blank', 'Water boils at ___ degrees Celsius at sea level.', '100', '', ''],
  ['callout', 'Remember to save your work.', '', '', ''],
  ['poll', 'How confident do you feel?', 'Very|Somewhat|Not yet', '', ''],
  ['reflection', 'What will you do differently tomorrow?', '', '', ''],
  ['steps', '', 'Plan=Decide what to do|Do=Carry it out|Check=Look at the result', '', ''],
];

function courseCsv(rows: number, perScreen: number): string {
  const out: string[][] = [['screen', 'type', 'text', 'options', 'correct', 'explanation']];
  for (let i = 0; i < rows; i++) {
    const [type, text, options, correct, explanation] = ROW_KINDS[i % ROW_KINDS.length];
    out.push([
      `Screen ${Math.floor(i / perScreen) + 1}`,
      type,
      text && `${text} (${i + 1})`,
      options,
      correct,
      explanation,
    ]);
  }
  return csvText(out);
}

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  const r = (n: number) => Math.round(n * 1000) / 1000;
  return { n: s.length, medianMs: r(at(0.5)), p99Ms: r(at(0.99)), minMs: r(s[0]), maxMs: r(s[s.length - 1]) };
}

const ratio = (a: number, b: number) => Math.round((a / b) * 10) / 10;

async function timed<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

export async function run(): Promise<Record<string, unknown>> {
  const app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
  const workerRt = await testRuntime('csv-worker');
  const worker = await startCsvWorker(workerRt);
  try {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Authoring bench');

    // ---------------------------------------------------------------- (a) PATCH
    const screens = parseCourseCsv(courseCsv(300, 10)).screens;
    // A failed creation throws a LecternError naming its status and code.
    const created = await clientFor(app, ws.key).createCourse({
      body: { title: 'Bench course', screens } as RequestBody<'createCourse'>,
    });
    const courseId = created.data.id;
    // Each PATCH changes one paragraph, so every write is a real one (new content hash).
    const bodyFor = (i: number) => {
      const copy = structuredClone(screens);
      copy[i % 30].blocks[1].text = `Edited paragraph, revision ${i}`;
      return { screens: copy };
    };
    const patchBytes = Buffer.byteLength(JSON.stringify(bodyFor(0)));
    const httpSamples: number[] = [];
    for (let i = 0; i < PATCH_RUNS + 20; i++) {
      const body = bodyFor(i);
      const [ms, res] = await timed(() =>
        call(app.base, 'PATCH', `/courses/${courseId}`, { key: ws.key, body }),
      );
      if (res.status !== 200) throw new Error(`PATCH failed: ${res.status} ${res.text.slice(0, 300)}`);
      if (i >= 20) httpSamples.push(ms);
    }
    const validateSamples: number[] = [];
    for (let i = 0; i < PATCH_RUNS + 20; i++) {
      const body = bodyFor(i);
      const [ms, issues] = await timed(() => {
        const parsed = UpdateCourse.safeParse(body);
        if (!parsed.success) return parsed.error.issues.length;
        return validateScreens(parsed.data.screens).length;
      });
      if (issues !== 0) throw new Error('the PATCH body does not validate in-process');
      if (i >= 20) validateSamples.push(ms);
    }
    const patchHttp = stats(httpSamples);
    const patchValidate = stats(validateSamples);

    // ------------------------------------------------------------ (b) CSV import
    const file = courseCsv(2000, 20);
    const importSamples: number[] = [];
    for (let i = 0; i < CSV_RUNS + 2; i++) {
      const [ms, res] = await timed(() =>
        call<{ data: { id: string }; issues: unknown[] }>(
          app.base,
          'POST',
          '/courses/import/csv?title=Bench%20import',
          {
            key: ws.key,
            raw: file,
            headers: { 'content-type': 'text/csv' },
          },
        ),
      );
      if (res.status !== 201 || res.body.issues.length !== 0)
        throw new Error(`import failed: ${res.status} ${res.text.slice(0, 300)}`);
      if (i >= 2) importSamples.push(ms);
    }
    // Where the time goes: the job row's life (queued → completed) covers bus, worker and DB.
    const jobRows = await boundQuery<{ ms: number }>(
      app.rt.orm.em.fork(),
      `select extract(epoch from (completed_at - created_at)) * 1000 as ms from jobs
        where workspace_id = ? and kind = 'csv.import' and status = 'completed' order by created_at`,
      [ws.id],
    );
    const jobSamples = jobRows.slice(2).map((r) => Number(r.ms));
    const parseSamples: number[] = [];
    for (let i = 0; i < CSV_RUNS * 2 + 3; i++) {
      const [ms, parsed] = await timed(() => parseCourseCsv(file));
      if (parsed.screens.length !== 100) throw new Error('the bench CSV does not parse to 100 screens');
      if (i >= 3) parseSamples.push(ms);
    }
    const csvHttp = stats(importSamples);
    const csvParse = stats(parseSamples);

    return {
      patch: {
        course: '30 screens × 10 blocks',
        bodyKiB: Math.round(patchBytes / 102.4) / 10,
        http: patchHttp,
        validateInProcess: patchValidate,
        ratioMedian: ratio(patchHttp.medianMs, patchValidate.medianMs),
        ratioP99: ratio(patchHttp.p99Ms, patchValidate.p99Ms),
      },
      csvImport: {
        rows: 2000,
        fileKiB: Math.round(Buffer.byteLength(file) / 102.4) / 10,
        endToEnd: csvHttp,
        jobRowLife: stats(jobSamples),
        parseInProcess: csvParse,
        ratioMedian: ratio(csvHttp.medianMs, csvParse.medianMs),
      },
    };
  } finally {
    await worker.stop();
    await closeRuntime(workerRt, { keepStorage: true });
    await app.close();
  }
}
