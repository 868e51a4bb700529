import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { boundQuery } from '@lectern/db';
import { runJobWorker, type JobWorkerHandle } from '@lectern/jobs';
import { generationJob } from '@lectern/generation';
import { GenerationEnv, parseEnv } from '@lectern/config';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call, clientFor, waitFor } from '../support/http.js';
import { REPO_ROOT, envFor } from '../support/spine.js';
import { goodCourse, startFakeLlm, type FakeLlm } from '../support/fake-llm.js';

describe('generation: a worker killed mid-job', function () {
  this.timeout(90_000);
  let llm: FakeLlm;
  let app: TestApp;
  let ws: TestWorkspace;
  let worker: JobWorkerHandle | undefined;
  const ackWaitMs = 1500;

  before(async () => {
    llm = await startFakeLlm();
    app = await startTestApp({
      GENERATION_BASE_URL: llm.baseUrl,
      GENERATION_MODEL: 'fake-model',
      GENERATION_TIMEOUT_MS: '30000',
    });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Crash');
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
    await llm?.close();
  });

  it('SIGKILL while the model writes: redelivered after AckWait, another worker completes it (attempts 2, one course)', async () => {
    // The first call never answers (the child dies holding it); the redelivery's call gets a course.
    llm.answer = (_r, n) => (n === 0 ? { hang: true } : { content: JSON.stringify(goodCourse(2)) });
    const res = await call<{ data: { id: string } }>(app.base, 'POST', '/generate', {
      key: ws.key,
      body: { prompt: 'Survive a crash' },
    });
    expect(res.status).to.equal(202);
    const id = res.body.data.id;
    const env = {
      GENERATION_BASE_URL: llm.baseUrl,
      GENERATION_MODEL: 'fake-model',
      GENERATION_TIMEOUT_MS: '30000',
    };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'test/support/generation-worker-child.ts'), String(ackWaitMs)],
      { cwd: REPO_ROOT, env: envFor(app.rt.cfg, env), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      await waitFor(() => llm.requests.length === 1, {
        timeoutMs: 30_000,
        what: `the child to call the model (${err})`,
      });
      const [running] = await boundQuery<{ status: string; attempts: number }>(
        app.rt.orm.em.fork(),
        'select status, attempts from jobs where id = ?',
        [id],
      );
      expect(running).to.include({ status: 'processing', attempts: 1 });
      child.kill('SIGKILL');
      await exited;

      const cfg = parseEnv([GenerationEnv], env);
      worker = await runJobWorker(app.rt, { ...generationJob({ cfg, allowPrivate: true }), ackWaitMs });
      const lectern = clientFor(app, ws.key);
      const job = await waitFor(
        async () => {
          const { data } = await lectern.getGenerationJob({ params: { id } });
          return data.status === 'completed' || data.status === 'failed' ? data : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(job.status).to.equal('completed');
      const [row] = await boundQuery<{ attempts: number }>(
        app.rt.orm.em.fork(),
        'select attempts from jobs where id = ?',
        [id],
      );
      expect(row!.attempts).to.equal(2);
      const [{ n }] = await boundQuery<{ n: number }>(
        app.rt.orm.em.fork(),
        "select count(*)::int as n from courses where workspace_id = ? and source_kind = 'generated'",
        [ws.id],
      );
      expect(n).to.equal(1);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});
