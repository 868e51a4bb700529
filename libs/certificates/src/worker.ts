import { boundQuery } from '@lectern/db';
import { CertificateEnv, type EnvOf } from '@lectern/config';
import type { CertificateRenderResult } from '@lectern/contracts';
import { OutboundEnv } from '@lectern/outbound';
import type { Storage } from '@lectern/storage';
import {
  runJobWorker,
  type ClaimedJob,
  type JobContext,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from '@lectern/jobs';
import { lazyFontLibrary, type FontLibrary } from './render/fonts.js';
import { fetchLogo } from './render/logo.js';
import { renderCertificate } from './render/render.js';

export const CERTIFICATE_RENDER_KIND = 'certificate.render' as const;
/** Durable consumer name: every certificate-worker process shares the queue. */
export const CERTIFICATE_WORKER_APP = 'certificate-worker';

/**
 * The configuration the render worker reads: the certificate settings, and the outbound flag that decides
 * whether template logos may be fetched from private networks (one outbound-request policy for the service).
 */
export const CERTIFICATE_WORKER_ENV = [CertificateEnv, OutboundEnv] as const;
export type CertificateWorkerConfig = EnvOf<typeof CERTIFICATE_WORKER_ENV>;

/** How pages are drawn: the faces and the logo fetch limits. */
export interface CertificateRenderSettings {
  fonts: FontLibrary;
  /** ALLOW_PRIVATE_NETWORKS: logos are fetched under the same policy as webhook deliveries. */
  allowPrivate: boolean;
  /** CERTIFICATE_LOGO_MAX_BYTES */
  logoMaxBytes: number;
  /** CERTIFICATE_LOGO_TIMEOUT_MS */
  logoTimeoutMs: number;
}

/** What the render handler uses: the settings and the object store it writes the PDF to. */
export interface CertificateRenderDeps extends CertificateRenderSettings {
  storage: Pick<Storage, 'put'>;
}

/**
 * The settings from the parsed configuration. The faces default to `lazyFontLibrary` (checked now, read on the
 * first render); a process that only renders passes `loadFontLibrary(…)` to pay the read at start instead.
 * Throws without the Latin faces; other missing faces are in `fonts.missing()`.
 */
export function certificateRenderSettings(
  cfg: CertificateWorkerConfig,
  fonts: FontLibrary = lazyFontLibrary(cfg.CERTIFICATE_FONT_DIR),
): CertificateRenderSettings {
  return {
    fonts,
    allowPrivate: cfg.ALLOW_PRIVATE_NETWORKS,
    logoMaxBytes: cfg.CERTIFICATE_LOGO_MAX_BYTES,
    logoTimeoutMs: cfg.CERTIFICATE_LOGO_TIMEOUT_MS,
  };
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
        allowPrivate: deps.allowPrivate,
        maxBytes: deps.logoMaxBytes,
        timeoutMs: deps.logoTimeoutMs,
      });
      if (got.ok) logo = got.bytes;
      else warnings.push(`logo ${input.tokens.logoUrl} left out: ${got.reason}`);
    }
    const rendered = await renderCertificate(input, { fonts: deps.fonts, logo });
    warnings.push(...rendered.warnings);
    for (const w of warnings) ctx.log.warn({ serial: input.serial }, w);
    await deps.storage.put(input.pdfKey, rendered.pdf, 'application/pdf');
    await boundQuery(
      ctx.em,
      'update issued_certificates set pdf_key = ? where serial = ? and workspace_id = ?',
      [input.pdfKey, input.serial, job.workspaceId],
    );
    return { pdfKey: input.pdfKey, bytes: rendered.pdf.length, warnings };
  };
}

/** The `certificate.render` entry of the job registry: one durable consumer on `<prefix>.jobs.certificate.render`. */
export function certificateRenderJob(
  deps: CertificateRenderDeps,
): JobWorkerOptions<typeof CERTIFICATE_RENDER_KIND> {
  return {
    kind: CERTIFICATE_RENDER_KIND,
    app: CERTIFICATE_WORKER_APP,
    handler: certificateRenderHandler(deps),
    // Rendering is CPU work on one thread; a few in flight overlap the database and store round trips.
    concurrency: 4,
    // A render takes milliseconds; the logo fetch is capped at CERTIFICATE_LOGO_TIMEOUT_MS (≤ 30 s).
    ackWaitMs: 45_000,
    maxDeliver: 5,
  };
}

export interface CertificateWorkerOptions extends CertificateRenderSettings {
  concurrency?: number;
}

/**
 * The certificate worker alone (tests, benches); `lectern worker certificate` runs the same entry through the job
 * registry. Its object store is read for job blobs and written with the PDFs.
 */
export function startCertificateWorker(
  deps: JobWorkerDeps & { storage: Pick<Storage, 'get' | 'put'> },
  opts: CertificateWorkerOptions,
): Promise<JobWorkerHandle> {
  const { concurrency, ...settings } = opts;
  // The worker serves every other script; certificates needing these are refused with a 503 until installed.
  for (const m of settings.fonts.missing())
    deps.log.warn(
      { script: m.script, package: m.package, files: m.files },
      `certificate fonts missing: apt-get install ${m.package} and restart the worker`,
    );
  const job = certificateRenderJob({ ...settings, storage: deps.storage });
  return runJobWorker(deps, { ...job, concurrency: concurrency ?? job.concurrency });
}
