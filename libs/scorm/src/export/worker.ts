import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OutboundEnv } from '@lectern/outbound';
import { ScormEnv, type EnvOf } from '@lectern/config';
import type { ScormExportJobInput, ScormExportJobResult } from '@lectern/contracts';
import {
  CourseSchema,
  CourseTranslationSchema,
  ThemeSchema,
  type Course,
  type CourseTranslation,
  type EntityManager,
  type Theme,
} from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import { courseDto, themeDto } from '@lectern/authoring';
import {
  buildLearnerCourse,
  mediaRefs,
  type LearnerCourseSource,
  type MediaRef,
} from '@lectern/learner-runs';
import { playerAssets, playerPageHtml, type PlayerConfig } from '@lectern/player';
import type { Storage } from '@lectern/storage';
import {
  runJobWorker,
  type ClaimedJob,
  type JobContext,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from '@lectern/jobs';
import { COURSE_ENTRY, GENERATOR_SCHEMA } from '../package-layout.js';
import { buildManifest } from './manifest.js';
import { findMedia, mediaIdOf, posterFrameOf } from '@lectern/media';
import {
  digestFile,
  isFetchable,
  packAssets,
  type AssetUse,
  type PackAssetsOptions,
  type ReadStored,
} from './assets.js';

export const SCORM_EXPORT_KIND = 'scorm.export' as const;
/** Durable consumer name (`<prefix>_scorm-export`): every scorm-worker process shares the export queue. */
export const SCORM_EXPORT_APP = 'scorm-export';

/**
 * What the export reads: the SCORM settings, and the outbound flag that decides whether custom fonts and media
 * may be fetched from private networks (one outbound-request policy, as for certificate logos and webhooks).
 */
export const SCORM_WORKER_ENV = [ScormEnv, OutboundEnv] as const;
export type ScormWorkerConfig = EnvOf<typeof SCORM_WORKER_ENV>;

/** The fetch policy and caps of fonts and media (`PackAssetsOptions`), plus where the bundle and temp files are. */
export interface ScormExportSettings extends Omit<PackAssetsOptions, 'dir' | 'lookup' | 'readStored'> {
  /** The built player bundle (PLAYER_ASSETS_DIR; `defaultPlayerAssetsDir()` when unset). */
  assetsDir?: string;
  /** Where the fetched files and the zip is written before it is uploaded (os.tmpdir() by default). */
  tmpDir?: string;
}

export interface ScormExportDeps extends ScormExportSettings {
  storage: Pick<Storage, 'putFile' | 'getToFile'>;
}

export function scormExportSettings(cfg: ScormWorkerConfig): ScormExportSettings {
  return {
    assetsDir: cfg.PLAYER_ASSETS_DIR,
    allowPrivate: cfg.ALLOW_PRIVATE_NETWORKS,
    fontMaxBytes: cfg.SCORM_FONT_MAX_BYTES,
    fontTimeoutMs: cfg.SCORM_FONT_TIMEOUT_MS,
    mediaMaxBytes: cfg.SCORM_MEDIA_MAX_BYTES,
    mediaTimeoutMs: cfg.SCORM_MEDIA_TIMEOUT_MS,
    packageMediaMaxBytes: cfg.SCORM_PACKAGE_MEDIA_MAX_BYTES,
  };
}

/** The `scorm` variant of the player's config (docs/scorm.md "Package layout"). */
export type ScormPlayerConfig = Extract<PlayerConfig, { mode: 'scorm' }>;

/** `lectern/course.json`: the course as stored, every translation and the theme, for the importer. */
export interface CourseEntry {
  schema: typeof GENERATOR_SCHEMA;
  version: 1;
  course: ReturnType<typeof courseDto>;
  translations: Pick<
    CourseTranslation,
    'id' | 'locale' | 'content' | 'sourceHash' | 'sourceFingerprints' | 'createdAt' | 'updatedAt'
  >[];
  theme: ReturnType<typeof themeDto> | null;
}

const canonical = (tag: string): string | null => {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
};

/**
 * What the package carries inside: every font, and the blocks' images, video and audio and the theme's logo when
 * they are absolute http(s) URLs or `media://` references (read from the object store when they are files of the
 * course's workspace). Downloads (`resource.url`) stay links.
 */
const packable = (ref: MediaRef): ref is MediaRef & { use: AssetUse } =>
  ref.use === 'font' || (ref.use !== 'file' && (isFetchable(ref.url) || mediaIdOf(ref.url) !== null));

/**
 * How the export names a video upload's processed poster frame among the references it packs (and in its
 * warnings). No stored field can hold it: `packable` takes only http(s) URLs and `media://` ids from a course.
 */
const frameOf = (url: string) => `poster frame of ${url}`;

/** `<slug>-scorm2004.zip`: the title in lower-case ASCII words, or the course id when nothing is left. */
export function packageFileName(title: string, courseId: string, version: ScormExportJobInput['version']) {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return `${slug || courseId.replace(/[^A-Za-z0-9_-]/g, '')}-${version}.zip`;
}

async function loadCourse(em: EntityManager, workspaceId: string, courseId: string) {
  const course = await em.findOne(CourseSchema, { id: courseId, workspaceId });
  if (!course) throw notFound('Course');
  const translations = await em.find(
    CourseTranslationSchema,
    { courseId, workspaceId },
    { orderBy: { locale: 'asc' } },
  );
  const theme = course.themeId ? await em.findOne(ThemeSchema, { id: course.themeId, workspaceId }) : null;
  return { course, translations, theme };
}

/** The translation to export for `lang` (null: the source), or 404 when the course has no such locale. */
function pickTranslation(course: Course, translations: CourseTranslation[], lang: string | null) {
  if (lang === null) return null;
  const want = canonical(lang);
  if (want === course.locale) return null;
  const t = want ? translations.find((x) => x.locale === want) : undefined;
  if (!t) {
    const have = [course.locale, ...translations.map((x) => x.locale)].join(', ');
    throw new AppError('not_found', `The course has no locale "${lang}" (it has: ${have})`);
  }
  return t;
}

function courseEntry(course: Course, translations: CourseTranslation[], theme: Theme | null): CourseEntry {
  return {
    schema: GENERATOR_SCHEMA,
    version: 1,
    course: courseDto(course),
    translations: translations.map((t) => ({
      id: t.id,
      locale: t.locale,
      content: t.content,
      sourceHash: t.sourceHash,
      sourceFingerprints: t.sourceFingerprints,
      createdAt: t.createdAt,
      updatedAt: t.updatedAt,
    })),
    theme: theme ? themeDto(theme) : null,
  };
}

interface ZipEntry {
  name: string;
  body?: string | Buffer;
  /** Read from this file as the zip is written (the bundle, fetched fonts and media). */
  path?: string;
  store?: boolean;
}

/** Writes the zip to `file` as it is produced (archiver streams each entry; nothing holds the whole package). */
async function writeZip(file: string, entries: ZipEntry[]): Promise<void> {
  // Loaded on the first export: every process that builds the job registry (the API's `lectern start`, the CLI)
  // would otherwise pay for archiver's module tree at start.
  const { default: archiver } = await import('archiver');
  const out = createWriteStream(file);
  const archive = archiver('zip', { zlib: { level: 6 } });
  const closed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    out.on('error', reject);
    archive.on('error', reject);
    archive.on('warning', reject);
  });
  archive.pipe(out);
  for (const e of entries) {
    // `store` is a zip entry's option (archiver's ZipEntryData); `file` is typed with the common EntryData.
    const data = { name: e.name, store: e.store ?? false } as Parameters<typeof archive.file>[1];
    if (e.path !== undefined) archive.file(e.path, data);
    else archive.append(e.body ?? '', { name: e.name });
  }
  await archive.finalize();
  await closed;
}

/**
 * The `scorm.export` handler: builds the package for the course (in the job's workspace) and uploads it under
 * `jobs/<jobId>/<fileName>`, so a redelivered job overwrites the same object. Reads only; the job row's result
 * is the one write.
 */
export function scormExportHandler(deps: ScormExportDeps) {
  return async (
    job: ClaimedJob<typeof SCORM_EXPORT_KIND>,
    ctx: JobContext,
  ): Promise<ScormExportJobResult> => {
    const { courseId, version, lang, track } = job.input;
    const { course, translations, theme } = await loadCourse(ctx.em, job.workspaceId, courseId);
    const source: LearnerCourseSource = {
      course: courseDto(course),
      translation: pickTranslation(course, translations, lang),
      theme: theme && themeDto(theme),
    };
    // The learner's copy with the answer keys (the package grades in the browser); instructor notes are left out
    // (course.json keeps them).
    const stored = await buildLearnerCourse(source, { answerKeys: 'kept' });
    const assets = playerAssets(deps.assetsDir);
    const refs = mediaRefs(stored).filter(packable);

    // The course's uploaded files: only the job's workspace's, and only those still there.
    const ids = refs.flatMap((r) => mediaIdOf(r.url) || []);
    const uploads = await findMedia(ctx.em, job.workspaceId, [...new Set(ids)]);
    // A video without a poster of its own is served with its processed frame (as `mediaSigner` serves it): the
    // package carries the frame too, listed right after the video. Frame reference → its object key.
    const frames = new Map<string, string>();
    for (const r of refs) {
      const m = r.wantsPoster ? uploads.get(mediaIdOf(r.url) || '') : undefined;
      const frame = m && posterFrameOf(m);
      if (frame) frames.set(frameOf(r.url), frame.key);
    }
    const packRefs = refs.flatMap((r) => {
      const frame = frameOf(r.url);
      return frames.has(frame) ? [r, { url: frame, use: 'image' as const }] : [r];
    });
    const readStored: ReadStored = async (url, file) => {
      const key = frames.get(url) ?? uploads.get(mediaIdOf(url) ?? '')?.objectKey;
      if (!key)
        return { ok: false, reason: 'no file of this workspace (deleted, another workspace’s or not an id)' };
      try {
        return await digestFile(file, await deps.storage.getToFile(key, file));
      } catch (err) {
        return { ok: false, reason: `not in the object store (${(err as Error).message})` };
      }
    };

    const dir = await mkdtemp(path.join(deps.tmpDir ?? os.tmpdir(), `lectern-scorm-${job.id}-`));
    try {
      const packed = await packAssets(packRefs, { ...deps, dir, readStored });
      for (const w of packed.warnings) ctx.log.warn({ courseId }, w);
      // Media fields point at the packaged files: an http(s) file that could not be packaged keeps its URL, a
      // `media://` one resolves nowhere (the player's labelled placeholder); a packaged upload carries its size
      // and placeholder (its variants stay out: docs/scorm.md "Media"), a video without a poster of its own its
      // packaged frame and its size. course.json keeps the original references (the course's backup).
      const playerCourse = await buildLearnerCourse(source, {
        answerKeys: 'kept',
        mediaUrl: (ref) => {
          if (!packable(ref)) return ref.url;
          const name = packed.names.get(ref.url);
          const id = mediaIdOf(ref.url);
          if (id === null) return name ?? ref.url;
          if (!name) return { url: null };
          const m = uploads.get(id);
          if (!m) return name;
          const frame = ref.wantsPoster ? packed.names.get(frameOf(ref.url)) : undefined;
          if (frame)
            return {
              url: name,
              poster: frame,
              ...(m.width && m.height ? { width: m.width, height: m.height } : {}),
            };
          if (ref.use !== 'image') return name;
          return {
            url: name,
            ...(m.width && m.height ? { width: m.width, height: m.height } : {}),
            ...(m.placeholder ? { placeholder: m.placeholder } : {}),
          };
        },
      });
      const config: ScormPlayerConfig = {
        mode: 'scorm',
        scorm: version === 'scorm12' ? '1.2' : '2004',
        course: playerCourse,
        lang: lang === null ? null : playerCourse.locale,
        track,
      };
      const html = playerPageHtml({
        config,
        assets,
        assetBase: '.',
        title: playerCourse.title,
        lang: playerCourse.locale,
        dir: playerCourse.direction,
      });
      const entry = JSON.stringify(courseEntry(course, translations, theme));

      const entries: ZipEntry[] = [
        { name: 'index.html', body: html },
        { name: assets.js.file, path: assets.js.path },
        { name: assets.css.file, path: assets.css.path },
        { name: COURSE_ENTRY, body: entry },
        // Each fetched file is added from its temp file: archiver streams it, no video is held in memory.
        ...packed.files,
      ];
      const manifest = buildManifest({
        version,
        courseId: course.id,
        title: playerCourse.title,
        lang: playerCourse.locale,
        files: entries.map((e) => e.name),
      });
      const fileName = packageFileName(playerCourse.title, course.id, version);
      const zip = path.join(dir, 'package.zip');
      await writeZip(zip, [{ name: 'imsmanifest.xml', body: manifest }, ...entries]);
      const key = `jobs/${job.id}/${fileName}`;
      const bytes = await deps.storage.putFile(key, zip, 'application/zip');
      return { key, bytes, fileName, warnings: packed.warnings };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
}

/** The `scorm.export` entry of the job registry: one durable consumer on `<prefix>.jobs.scorm.export`. */
export function scormExportJob(deps: ScormExportDeps): JobWorkerOptions<typeof SCORM_EXPORT_KIND> {
  return {
    kind: SCORM_EXPORT_KIND,
    app: SCORM_EXPORT_APP,
    handler: scormExportHandler(deps),
    // It reads the course and writes only to the object store: no transaction is held while fonts and media are
    // fetched and the package is zipped and uploaded.
    readsOnly: true,
    // Zipping is CPU on one thread, the rest is I/O: a few in flight overlap the store, fonts and media.
    concurrency: 4,
    // An export without remote files takes well under a second; each font or media fetch is capped by its own
    // timeout (SCORM_FONT_TIMEOUT_MS, SCORM_MEDIA_TIMEOUT_MS), four at a time. The API waits
    // SCORM_EXPORT_TIMEOUT_MS (60 s) for the answer, so a course whose media take longer answers 504 anyway.
    ackWaitMs: 60_000,
    maxDeliver: 5,
  };
}

/** The export worker alone, with its own settings (tests; `lectern worker scorm` runs the registry's entries). */
export function startScormExportWorker(
  deps: JobWorkerDeps & { storage: Pick<Storage, 'getToFile' | 'putFile'> },
  settings: ScormExportSettings & { concurrency?: number },
): Promise<JobWorkerHandle> {
  const { concurrency, ...rest } = settings;
  const job = scormExportJob({ ...rest, storage: deps.storage });
  return runJobWorker(deps, { ...job, concurrency: concurrency ?? job.concurrency });
}
