/**
 * `planImport` in a worker thread. `lectern start` runs the API and every job worker on one event loop, and
 * parsing a hostile package synchronously held it for tens of seconds (docs/scorm.md "Hostile content"); in a
 * thread the loop stays free, and the thread's heap is capped so one package cannot take the process down.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode, type Issue } from '@lectern/errors';
import { refused } from './zip-guard.js';
import type { ImportPlan } from './import-package.js';

export type PlanReply =
  | { ok: true; plan: ImportPlan; entries: number }
  | {
      ok: false;
      appError?: { code: ErrorCode; message: string; issues?: Issue[]; retryable: boolean };
      fault?: { name: string; message: string };
    };

interface TsxPackage {
  exports: { './esm/api': { import: { default: string } } };
}

/**
 * Heap of one planning thread (two run per process). The worst page the caps allow (4 MiB, cut at 250,000
 * elements) fits well under it; the scorm worker's container has 512 MiB with a 320 MiB main heap
 * (deploy/k8s/scorm-worker.yaml), so a larger cap would let a hostile package kill the pod instead of being
 * refused. A course.json whose objects need more is refused as `too_complex`.
 */
const THREAD_HEAP_MB = 192;

const tooComplex = () =>
  refused('too_complex', 'The package is too complex to read within the import limits (memory, nesting)');

/**
 * Runs from the built `.js` files in production. From TypeScript sources (tests, `tsx`) the thread starts with
 * tsx's loader registered, which a worker does not inherit from its parent.
 */
function startThread(file: string): Worker {
  const self = import.meta.url;
  if (!self.endsWith('.ts'))
    return new Worker(new URL('./plan-worker.js', self), {
      workerData: { file },
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
  const entry = new URL('./plan-worker.ts', self).href;
  // tsx's ESM API, found from here: `import.meta.resolve` is missing when tsx loads this module as CommonJS (as
  // mocha does), and the CommonJS build of the API fails to register from a thread.
  const pkgJson = createRequire(self).resolve('tsx/package.json');
  const api = (JSON.parse(readFileSync(pkgJson, 'utf8')) as TsxPackage).exports['./esm/api'].import.default;
  const tsx = pathToFileURL(path.join(path.dirname(pkgJson), api)).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, {
    eval: true,
    workerData: { file },
    resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
  });
}

/**
 * Opens and plans the package at `file` in a worker thread. Refusals come back as the same non-retryable
 * `invalid_request` errors `planImport` throws; a thread that runs out of heap or stack on the input is a
 * refusal too (`too_complex`): the same package would fail the same way on every retry.
 */
export function planInThread(
  file: string,
  signal?: AbortSignal,
): Promise<{ plan: ImportPlan; entries: number }> {
  return new Promise((resolve, reject) => {
    const thread = startThread(file);
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
      void thread.terminate();
    };
    const onAbort = () => settle(() => reject(signal?.reason ?? new Error('aborted')));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    thread.on('message', (reply: PlanReply) =>
      settle(() => {
        if (reply.ok) return resolve({ plan: reply.plan, entries: reply.entries });
        if (reply.appError) {
          const { code, message, issues, retryable } = reply.appError;
          return reject(new AppError(code, message, { issues, retryable }));
        }
        if (reply.fault?.name === 'RangeError') return reject(tooComplex());
        reject(new Error(`SCORM import planning failed: ${reply.fault?.message ?? 'unknown error'}`));
      }),
    );
    thread.on('error', (err: Error & { code?: string }) =>
      settle(() => reject(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? tooComplex() : err)),
    );
    thread.on('exit', (code) =>
      settle(() => reject(new Error(`SCORM import planning thread exited (${code}) without an answer`))),
    );
  });
}
