import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from '@lectern/config';
import { boundQuery } from '@lectern/db';
import { AppError, HTTP_ERRORS, isRetryable } from '@lectern/errors';
import type { CertificateRenderInput, CertificateTokens, OpenRunResult } from '@lectern/contracts';
import type { JobWorkerHandle } from '@lectern/jobs';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  lazyFontLibrary,
  loadFontLibrary,
  missingFonts,
  renderCertificate,
  startCertificateWorker,
  type FontLibrary,
} from '@lectern/certificates';
import { SAMPLE_CERTIFICATE, fontDir, pdfText } from '../support/certificates.js';
import { makeWorkspace } from '../support/context.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';
import {
  createEmbedKey,
  playerApi,
  publishedCourse,
  quizFinishEvents,
  signIdentity,
} from '../support/player.js';

const base: CertificateRenderInput = {
  ...SAMPLE_CERTIFICATE,
  tokens: { eyebrow: 'Certificate of achievement', showScore: true },
};
const NO_CJK = 'fonts-noto-cjk is not installed on the certificate worker: apt-get install fonts-noto-cjk';

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(AppError);
  return err as AppError;
}

describe('certificates: fonts that degrade (a font folder with only some of the faces)', function () {
  this.timeout(60_000);
  let root: string;
  let noCjk: string;
  let noArabic: string;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'lectern-fonts-'));
    noCjk = await fontDir(root, 'no-cjk', ['latin', 'arabic', 'hebrew']);
    noArabic = await fontDir(root, 'no-arabic', ['latin', 'hebrew', 'cjk']);
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  describe('the library and the renderer', () => {
    let fonts: FontLibrary;
    before(() => {
      fonts = loadFontLibrary(noCjk);
    });
    const render = (input: Partial<CertificateRenderInput>, tokens: CertificateTokens = base.tokens) =>
      renderCertificate({ ...base, ...input, tokens }, { fonts, logo: null });

    it('without the CJK faces it loads what is there and reports the script, its package and files', () => {
      const cjk = {
        script: 'cjk',
        package: 'fonts-noto-cjk',
        files: [
          `${noCjk}/opentype/noto/NotoSansCJK-Regular.ttc`,
          `${noCjk}/opentype/noto/NotoSansCJK-Bold.ttc`,
        ],
      };
      expect(fonts.missing()).to.deep.equal([cjk]);
      expect(lazyFontLibrary(noCjk).missing()).to.deep.equal([cjk]);
      expect(missingFonts(noCjk)).to.deep.equal([cjk]);
      expect(fonts.chain('ja', 'regular').map((f) => f.name)).to.deep.equal([
        'latin-regular',
        'arabic-regular',
        'hebrew-regular',
      ]);
      // The system's folder has every face: nothing reported.
      expect(lazyFontLibrary().missing()).to.deep.equal([]);
    });

    it('a certificate in a script that is present renders as before (Latin, Arabic, Hebrew)', async () => {
      const latin = await pdfText((await render({})).pdf);
      expect(latin).to.include('Ada Lovelace').and.include('Score: 87.5%').and.include('November 21, 2026');
      for (const [locale, name] of [
        ['ar', 'محمد عبد الله'],
        ['he', 'דוד לוי'],
      ] as const) {
        const { pdf } = await render({ learnerName: name, locale, direction: 'rtl' });
        expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
      }
    });

    it('a Japanese name, course title or date is refused with a 503 naming fonts-noto-cjk, not retried', async () => {
      for (const input of [
        { learnerName: '山田太郎' },
        { courseTitle: '防火安全 Fire safety 101' },
        { learnerName: '김민준', locale: 'ko' },
        // A Latin certificate in Japanese: its date (年月日) and score label (スコア) need the CJK faces.
        { locale: 'ja' },
      ]) {
        const err = await refusal(render(input));
        expect(err.code, JSON.stringify(input)).to.equal('unavailable');
        expect(HTTP_ERRORS[err.code].status).to.equal(503);
        expect(err.message).to.include(NO_CJK);
        expect(err.retryable).to.equal(false);
        expect(isRetryable(err)).to.equal(false);
      }
      // Only what is drawn counts: the same Japanese-locale certificate without date and score renders.
      const { pdf } = await render({ locale: 'ja' }, { showDate: false, showScore: false });
      expect(await pdfText(pdf)).to.include('Ada Lovelace');
    });

    it('without the Arabic faces an Arabic name is refused naming fonts-noto-core; Japanese still renders', async () => {
      const partial = loadFontLibrary(noArabic);
      expect(partial.missing().map((m) => [m.script, m.package])).to.deep.equal([
        ['arabic', 'fonts-noto-core'],
      ]);
      const err = await refusal(
        renderCertificate(
          { ...base, learnerName: 'محمد عبد الله', locale: 'ar', direction: 'rtl' },
          { fonts: partial, logo: null },
        ),
      );
      expect(err.code).to.equal('unavailable');
      expect(err.message).to.include(
        'fonts-noto-core is not installed on the certificate worker: apt-get install fonts-noto-core',
      );
      const { pdf } = await renderCertificate(
        { ...base, learnerName: '山田太郎', locale: 'ja' },
        { fonts: partial, logo: null },
      );
      expect(await pdfText(pdf)).to.include('山田太郎');
    });

    it('without the Latin faces (the fallback of everything) the library and the worker settings refuse, with the fix', async () => {
      const cjkOnly = await fontDir(root, 'cjk-only', ['cjk']);
      const empty = await fontDir(root, 'empty', []);
      for (const dir of [cjkOnly, empty, '/nonexistent/fonts']) {
        const fix = new RegExp(
          `^certificate fonts missing: ${dir}/truetype/noto/NotoSans-Regular\\.ttf, ${dir}/truetype/noto/NotoSans-Bold\\.ttf\\. ` +
            'Install the Debian package fonts-noto-core \\(apt-get install fonts-noto-core\\), or set CERTIFICATE_FONT_DIR',
        );
        expect(() => loadFontLibrary(dir)).to.throw(fix);
        expect(() => lazyFontLibrary(dir)).to.throw(fix);
        expect(() =>
          certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, { CERTIFICATE_FONT_DIR: dir })),
        ).to.throw(fix);
      }
      expect(missingFonts(empty).map((m) => m.script)).to.deep.equal(['latin', 'arabic', 'hebrew', 'cjk']);
    });
  });

  describe('through the player download, with a worker started without the CJK faces', () => {
    let app: CustomApp;
    let worker: JobWorkerHandle;
    let player: ReturnType<typeof playerApi>;
    before(async () => {
      app = await startCustomApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000' });
      const settings = certificateRenderSettings(
        parseEnv(CERTIFICATE_WORKER_ENV, { CERTIFICATE_FONT_DIR: noCjk }),
      );
      expect(settings.fonts.missing().map((m) => m.package)).to.deep.equal(['fonts-noto-cjk']);
      worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 1 });
      player = playerApi(app.url);
    });
    after(async () => {
      await worker?.stop();
      await app?.close();
    });

    /** A signed learner of `name` who passed; answers the certificate download of the run. */
    async function passAndDownload(name: string, sub: string) {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Acme Academy');
      const courseId = await publishedCourse(app.base, ws.key, {
        title: 'Fire safety at work',
        passingScore: 75,
      });
      const ek = await createEmbedKey(app.base, ws.key);
      const identity = await signIdentity(ek, { name }, { sub });
      const opened = await player<OpenRunResult>('POST', '/runs', { body: { courseId, identity } });
      expect(opened.status, opened.text).to.be.oneOf([200, 201]);
      const run = opened.body.data;
      const done = await player('POST', `/runs/${run.completion.id}/events`, {
        token: run.runToken,
        body: {
          batchId: 'finish',
          events: quizFinishEvents(),
        },
      });
      expect(done.status, done.text).to.equal(200);
      const res = await fetch(`${app.url}/player/v1/runs/${run.completion.id}/certificate`, {
        headers: { authorization: `Bearer ${run.runToken}` },
      });
      return { ws, res, body: Buffer.from(await res.arrayBuffer()) };
    }

    it('a Latin learner gets the PDF as before', async () => {
      const { res, body } = await passAndDownload('Ada Lovelace', 'learner-ada');
      expect(res.status, body.toString()).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/pdf');
      expect(await pdfText(body)).to.include('Ada Lovelace');
    });

    it('a Japanese learner gets a 503 naming fonts-noto-cjk; the job failed once, without a retry', async () => {
      const { ws, res, body } = await passAndDownload('山田太郎', 'learner-yamada');
      expect(res.status, body.toString()).to.equal(503);
      const error = JSON.parse(body.toString()) as { error: string; message: string };
      expect(error.error).to.equal('service_unavailable');
      expect(error.message).to.include(NO_CJK);
      const jobs = await boundQuery<{ status: string; attempts: number; error: { code: string } }>(
        app.rt.orm.em.fork(),
        `select status, attempts, error from jobs where workspace_id = ? and kind = 'certificate.render'`,
        [ws.id],
      );
      expect(jobs.map((j) => [j.status, j.attempts, j.error.code])).to.deep.equal([
        ['failed', 1, 'unavailable'],
      ]);
    });
  });
});
