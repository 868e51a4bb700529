import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { newId, boundQuery, type EntityManager } from '@lectern/db';
import { createCertificateTemplate, createCourse } from '@lectern/authoring';
import { parseEnv } from '@lectern/config';
import { upsertIdentities } from '@lectern/identities';
import {
  CERTIFICATE_WORKER_ENV,
  DEFAULT_FONT_DIR,
  FONT_FILES,
  certificateRenderSettings,
  issueCertificate,
  startCertificateWorker,
  type CertificateSubject,
  type FontScript,
  type IssueOutcome,
} from '@lectern/certificates';
import type { CertificateRenderInput } from '@lectern/contracts';
import { makeWorkspace, startTestApp, type TestApp } from './context.js';

const run = promisify(execFile);

/** The facts of one certificate, fixed (serial, date), for render tests to vary. */
export const SAMPLE_CERTIFICATE: Omit<CertificateRenderInput, 'tokens'> = {
  serial: 'LC-7KQM-W3XD-9TPA',
  learnerName: 'Ada Lovelace',
  courseTitle: 'Fire safety at work',
  issuerName: 'Acme Academy',
  score: 87.5,
  locale: 'en',
  direction: 'ltr',
  issuedAt: '2026-11-21T09:30:00.000Z',
  verifyUrl: 'http://lectern.test/verify/LC-7KQM-W3XD-9TPA',
  pdfKey: 'unused',
};

/** A font folder with the real faces (symlinks to the system's) of `scripts` only, in the Debian layout. */
export async function fontDir(root: string, name: string, scripts: FontScript[]): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  for (const script of scripts) {
    for (const rel of Object.values(FONT_FILES[script])) {
      await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await symlink(path.join(DEFAULT_FONT_DIR, rel), path.join(dir, rel));
    }
  }
  return dir;
}

/** `pdftotext` of a PDF (poppler-utils, installed by .ci/run), layout kept. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cert-'));
  const file = path.join(dir, 'c.pdf');
  await writeFile(file, pdf);
  const { stdout } = await run('pdftotext', ['-enc', 'UTF-8', file, '-']);
  return stdout;
}

/** The page as a PNG (pdftoppm) at `dpi`, written to `out` when given; returns the PNG path. */
export async function pdfToPng(pdf: Buffer, out?: string, dpi = 110): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'cert-'));
  const file = path.join(dir, 'c.pdf');
  await writeFile(file, pdf);
  const base = out ? out.replace(/\.png$/, '') : path.join(dir, 'page');
  await run('pdftoppm', ['-png', '-r', String(dpi), '-singlefile', file, base]);
  return `${base}.png`;
}

/** What zbarimg decodes from the page (the QR code's text), or '' when it finds none. */
export async function qrText(pdf: Buffer): Promise<string> {
  const png = await pdfToPng(pdf, undefined, 150);
  try {
    const { stdout } = await run('zbarimg', ['--raw', '-q', png]);
    return stdout.trim();
  } catch {
    return '';
  }
}

export async function pngBytes(file: string): Promise<Buffer> {
  return readFile(file);
}

/** A course and a named learner in `workspaceId`, and the subject of a finished, passing run of them. */
export async function finishedRun(
  em: EntityManager,
  ws: { id: string; plan: 'scale' },
  over: Partial<CertificateSubject> & {
    name?: string | null;
    title?: string;
    certificateId?: string | null;
  } = {},
): Promise<CertificateSubject> {
  const course =
    over.courseId !== undefined
      ? { id: over.courseId, title: over.title ?? 'Course' }
      : await createCourse(em.fork(), ws, {
          title: over.title ?? 'Fire safety at work',
          certificateId: over.certificateId ?? null,
        });
  const externalId = `learner-${newId('x')}`;
  const [{ identity }] = await upsertIdentities(em.fork(), ws.id, [
    {
      externalId,
      name: over.name === undefined ? 'Ada Lovelace' : over.name,
      email: `${externalId}@example.test`,
    },
  ]);
  // A real run row: issued_certificates.completion_id references completions(id).
  const completionId = newId('cmp');
  await boundQuery(
    em.fork(),
    `insert into completions (id, workspace_id, course_id, identity_id, source, status, score, passed_at_completion,
       attempt, pass_started_at, content_hash, locale, started_at, last_seen_at, completed_at, last_event_at,
       rate_window_start)
     values (?, ?, ?, ?, 'embed', 'completed', ?, true, 1, now(), 'test', 'en', now(), now(), now(), now(), now())`,
    [completionId, ws.id, course.id, identity.id, over.score === undefined ? 87.5 : over.score],
  );
  return {
    workspaceId: ws.id,
    completionId,
    courseId: course.id,
    identityId: identity.id,
    identityExternalId: identity.externalId,
    learnerName: identity.name,
    courseTitle: course.title,
    score: 87.5,
    locale: 'en',
    status: 'completed',
    passed: true,
    ...over,
  };
}

/**
 * What the verification tests look up: an app with a generous lookup limit (the limit has tests of its own), a
 * certificate worker, and two issued certificates of one Scale workspace ("Acme Academy") — `plain` (default
 * design, learner `learnerName`) and `scored` (a template that shows the score and names the issuer).
 */
export async function verificationFixture(learnerName: string): Promise<{
  app: TestApp;
  workspaceId: string;
  plain: IssueOutcome;
  scored: IssueOutcome;
  close(): Promise<void>;
}> {
  const app = await startTestApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000' });
  const settings = certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {}));
  const worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 2 });
  const em = () => app.rt.orm.em.fork();
  const ws = await makeWorkspace(em(), 'scale', 'Acme Academy');
  const scale = { id: ws.id, plan: 'scale' as const };
  const plain = await issueCertificate(app.rt, await finishedRun(em(), scale, { name: learnerName }));
  const tpl = await createCertificateTemplate(em(), ws.id, {
    name: 'Scored',
    tokens: { showScore: true, issuerName: 'Acme Training Board' },
  });
  const scored = await issueCertificate(
    app.rt,
    await finishedRun(em(), scale, { certificateId: tpl.id, title: 'Forklift basics', score: 92 }),
  );
  return {
    app,
    workspaceId: ws.id,
    plain,
    scored,
    async close() {
      await worker.stop();
      await app.close();
    },
  };
}
