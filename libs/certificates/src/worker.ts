import { boundQuery } from '@lectern/db';
import type { CertificateRenderResult } from '@lectern/contracts';
import { runJobWorker, type ClaimedJob, type JobContext, type JobWorkerHandle } from '@lectern/jobs';
import type { Runtime } from '@lectern/runtime';
import { loadFontLibrary, type FontLibrary } from './render/fonts.js';
import { fetchLogo } from './render/logo.js';
import { renderCertificate } from './render/render.js';

export const CERTIFICATE_RENDER_KIND = 'certificate.render' as const;
/** Durable consumer name: every certificate-worker process shares the queue. */
export const CERTIFICATE_WORKER_APP = 'certificate-worker';

export interface CertificateRenderDeps {
  fonts: FontLibrary;
}

/**
 * The `certificate.render` handler: draws the PDF from the job input (the facts and the
 * design fixed at issue), writes it to the object store under the certificate's key and
 * records the key on the certificate in the job's transaction. The object key depends on
 * the serial only, so a redelivered job overwrites the same object with the same page.
 */
export function certificateRenderHandler(deps: CertificateRenderDeps) {
  return async (
    job: ClaimedJob<typeof CERTIFICATE_RENDER_KIND>,
    ctx: JobContext,
  ): Promise<CertificateRenderResult> => {
    const input = job.input;
    const warnings: string[] = [];
    let logo: Buffer | null = null;
    if (input.tokens.logoUrl) {
      const got = await fetchLogo(input.tokens.logoUrl, {
        allowPrivate: ctx.rt.cfg.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
        maxBytes: ctx.rt.cfg.CERTIFICATE_LOGO_MAX_BYTES,
        timeoutMs: ctx.rt.cfg.CERTIFICATE_LOGO_TIMEOUT_MS,
      });
      if (got.ok) logo = got.bytes;
      else warnings.push(`logo ${input.tokens.logoUrl} left out: ${got.reason}`);
    }
    const rendered = await renderCertificate(input, { fonts: deps.fonts, logo });
    warnings.push(...rendered.warnings);
    for (const w of warnings) ctx.log.warn({ serial: input.serial }, w);
    await ctx.rt.storage.put(input.pdfKey, rendered.pdf, 'application/pdf');
    await boundQuery(
      ctx.em,
      'update issued_certificates set pdf_key = ? where serial = ? and workspace_id = ?',
      [input.pdfKey, input.serial, job.workspaceId],
    );
    return { pdfKey: input.pdfKey, bytes: rendered.pdf.length, warnings };
  };
}

export interface CertificateWorkerOptions {
  concurrency?: number;
  fonts?: FontLibrary;
}

/** The certificate worker (apps/certificate-worker, `lectern start`): one durable consumer on `<prefix>.jobs.certificate.render`. */
export function startCertificateWorker(
  rt: Runtime,
  opts: CertificateWorkerOptions = {},
): Promise<JobWorkerHandle> {
  // Loaded before the consumer starts: a machine without the fonts fails here, with the fix in the message.
  const fonts = opts.fonts ?? loadFontLibrary(rt.cfg.CERTIFICATE_FONT_DIR);
  return runJobWorker(rt, {
    kind: CERTIFICATE_RENDER_KIND,
    app: CERTIFICATE_WORKER_APP,
    handler: certificateRenderHandler({ fonts }),
    // Rendering is CPU work on one thread; a few in flight overlap the database and store round trips.
    concurrency: opts.concurrency ?? 4,
    // A render takes milliseconds; the logo fetch is capped at CERTIFICATE_LOGO_TIMEOUT_MS (≤ 30 s).
    ackWaitMs: 45_000,
    maxDeliver: 5,
  });
}
