/**
 * Thread entry of `planInThread`: opens the package file, plans the import and posts the plan back. All parsing
 * of untrusted input (manifest XML, HTML pages, `course.json`) happens here, off the event loop the API and the
 * job harness share.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { isAppError } from '@lectern/errors';
import { ZipPackage } from './zip-guard.js';
import { planImport } from './import-package.js';
import type { PlanReply } from './plan-thread.js';

const { file } = workerData as { file: string };
let reply: PlanReply;
try {
  const pkg = await ZipPackage.open(file);
  reply = { ok: true, plan: await planImport(pkg), entries: pkg.entries.size };
} catch (err) {
  reply = isAppError(err)
    ? {
        ok: false,
        appError: { code: err.code, message: err.message, issues: err.issues, retryable: err.retryable },
      }
    : {
        ok: false,
        fault: {
          name: err instanceof Error ? err.name : 'Error',
          message: err instanceof Error ? err.message : String(err),
        },
      };
}
parentPort!.postMessage(reply);
