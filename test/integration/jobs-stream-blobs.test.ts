import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { makeWorkspace, testRuntime, type TestRuntime, type TestWorkspace } from '../support/context.js';
import { closeRuntime } from '@lectern/runtime';
import { newId, boundQuery } from '@lectern/db';
import { AppError, isAppError } from '@lectern/errors';
import { SCORM_BLOB, SCORM_IMPORT_KIND } from '@lectern/scorm';
import { jobBlobKey, processJob, runSyncJob, spoolToFile, type JobHandler } from '@lectern/jobs';
import type { JobCommand } from '@lectern/contracts';
import { jobsOf } from '../support/csv.js';
import { scormUploadKeys } from '../support/scorm-import.js';

/** A queued scorm.import job with its blob, as runSyncJob writes it, but not published. */
async function queuedJob(rt: TestRuntime, workspaceId: string, bytes: Buffer): Promise<JobCommand> {
  const jobId = newId('job');
  const key = jobBlobKey(jobId, SCORM_BLOB);
  await rt.storage.put(key, bytes, 'application/zip');
  await boundQuery(
    rt.orm.em.fork(),
    `insert into jobs (id, workspace_id, kind, status, input, attempts, created_at, updated_at)
     values (?, ?, ?, 'queued', ?::jsonb, 0, now(), now())`,
    [jobId, workspaceId, SCORM_IMPORT_KIND, JSON.stringify({ title: null, blobs: { [SCORM_BLOB]: key } })],
  );
  return { jobId, workspaceId, kind: SCORM_IMPORT_KIND };
}

describe('jobs: streamed input blobs and blob files (libs/jobs)', function () {
  this.timeout(60_000);
  let rt: TestRuntime;
  let ws: TestWorkspace;
  before(async () => {
    rt = await testRuntime('jobs-stream-blobs');
    ws = await makeWorkspace(rt.orm.em.fork(), 'scale', 'Stream blobs');
  });
  after(async () => {
    if (rt) await closeRuntime(rt, { keepStorage: true });
  });

  it('spoolToFile counts bytes: at the limit it keeps the file; one byte over, tooLarge() is thrown', async () => {
    const ok = await spoolToFile({
      stream: Readable.from([Buffer.alloc(600), Buffer.alloc(400)]),
      limit: 1000,
      tooLarge: () => new AppError('payload_too_large', 'too large'),
    });
    expect(ok.size).to.equal(1000);
    expect((await readFile(ok.file)).length).to.equal(1000);
    await rm(ok.dir, { recursive: true, force: true });
    let err: unknown;
    await spoolToFile({
      stream: Readable.from([Buffer.alloc(600), Buffer.alloc(401)]),
      limit: 1000,
      tooLarge: () => new AppError('payload_too_large', 'too large'),
    }).catch((e: unknown) => (err = e));
    expect(isAppError(err) && err.code).to.equal('payload_too_large');
  });

  it('runSyncJob with a stream over its limit: the error, no job row, no blob', async () => {
    const before = (await jobsOf(rt.orm.em.fork(), ws.id)).length;
    let err: unknown;
    await runSyncJob(rt, {
      workspaceId: ws.id,
      kind: SCORM_IMPORT_KIND,
      input: { title: null },
      blobs: {
        [SCORM_BLOB]: {
          stream: Readable.from([Buffer.alloc(2048)]),
          limit: 1024,
          tooLarge: () => new AppError('payload_too_large', 'too large'),
        },
      },
      timeoutMs: 1000,
    }).catch((e: unknown) => (err = e));
    expect(isAppError(err) && err.code).to.equal('payload_too_large');
    expect((await jobsOf(rt.orm.em.fork(), ws.id)).length).to.equal(before);
    expect(await scormUploadKeys(rt.storage)).to.deep.equal([]);
  });

  it('blobsAs file: the handler gets a temp file with the bytes, removed after; a retried delivery keeps the blob, the last one deletes it', async () => {
    const bytes = Buffer.from('package bytes');
    const cmd = await queuedJob(rt, ws.id, bytes);
    const seen: string[] = [];
    let calls = 0;
    const handler: JobHandler<typeof SCORM_IMPORT_KIND> = async (_job, ctx) => {
      const file = ctx.blobFile(SCORM_BLOB);
      seen.push(file);
      expect(await readFile(file)).to.deep.equal(bytes);
      if (++calls === 1) throw new Error('transient (simulated)');
      throw new AppError('invalid_request', 'refused');
    };
    const opts = {
      kind: SCORM_IMPORT_KIND,
      handler,
      blobsAs: 'file' as const,
      deleteBlobsWhenDone: true,
      maxDeliver: 3,
    };
    let thrown: unknown;
    await processJob(rt, opts, cmd, 1, rt.log).catch((e: unknown) => (thrown = e));
    expect(String(thrown)).to.include('simulated');
    expect(existsSync(seen[0]), 'temp file removed after the delivery').to.equal(false);
    expect(await scormUploadKeys(rt.storage), 'kept for the retry').to.deep.equal([
      jobBlobKey(cmd.jobId, SCORM_BLOB),
    ]);

    expect(await processJob(rt, opts, cmd, 2, rt.log)).to.equal('failed');
    expect(existsSync(seen[1])).to.equal(false);
    expect(await scormUploadKeys(rt.storage), 'deleted once the job ended').to.deep.equal([]);
  });

  it('readsOnly: the handler runs outside any transaction, the result is written after it; a job ended meanwhile is left alone', async () => {
    const meta = { kind: 'salvaged' as const, warnings: [] };
    const cmd = await queuedJob(rt, ws.id, Buffer.from('x'));
    let inTransaction: boolean | undefined;
    const opts = {
      kind: SCORM_IMPORT_KIND,
      readsOnly: true,
      handler: (async (_job, ctx) => {
        inTransaction = ctx.em.isInTransaction();
        return { courseId: 'crs_readsonly', meta };
      }) as JobHandler<typeof SCORM_IMPORT_KIND>,
    };
    expect(await processJob(rt, opts, cmd, 1, rt.log)).to.equal('completed');
    expect(inTransaction).to.equal(false);
    const [row] = await boundQuery<{ status: string; result: unknown }>(
      rt.orm.em.fork(),
      'select status, result from jobs where id = ?',
      [cmd.jobId],
    );
    expect(row).to.deep.equal({ status: 'completed', result: { courseId: 'crs_readsonly', meta } });

    // Another delivery finished the job while this handler worked: its result is not written over the other's.
    const raced = await queuedJob(rt, ws.id, Buffer.from('y'));
    const racing = {
      ...opts,
      handler: (async () => {
        await boundQuery(
          rt.orm.em.fork(),
          `update jobs set status = 'completed', result = '{}'::jsonb where id = ?`,
          [raced.jobId],
        );
        return { courseId: 'crs_late', meta };
      }) as JobHandler<typeof SCORM_IMPORT_KIND>,
    };
    expect(await processJob(rt, racing, raced, 1, rt.log)).to.equal('skipped');
    const [kept] = await boundQuery<{ result: unknown }>(
      rt.orm.em.fork(),
      'select result from jobs where id = ?',
      [raced.jobId],
    );
    expect(kept.result).to.deep.equal({});
    // The run shares one bucket: leave no upload behind for the SCORM import tests that count them.
    for (const c of [cmd, raced]) await rt.storage.remove(jobBlobKey(c.jobId, SCORM_BLOB));
  });
});
