import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Storage } from '@lectern/storage';
import { COURSE_ENTRY, GENERATOR_SCHEMA, SCORM_BLOB } from '@lectern/scorm';
import { REPO_ROOT } from './spine.js';
import { call, type Res } from './http.js';
import { zipOf, type ZipEntryInput } from './zip.js';

export interface ScormImportBody {
  data: {
    id: string;
    title: string;
    status: string;
    sourceKind: string;
    screens: { id: string; title: string; blocks: Record<string, unknown>[] }[];
    [k: string]: unknown;
  };
  meta: { kind: 'roundtrip' | 'salvaged'; warnings: { code: string; message: string; path?: string }[] };
  error?: string;
  message?: string;
  issues?: { code: string; path: (string | number)[]; message: string }[];
}

export function importScorm(
  base: string,
  key: string,
  body: Buffer | string,
  opts: { title?: string; contentType?: string | null } = {},
): Promise<Res<ScormImportBody>> {
  const qs = opts.title === undefined ? '' : `?title=${encodeURIComponent(opts.title)}`;
  const headers: Record<string, string> = {};
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/zip';
  return call<ScormImportBody>(base, 'POST', `/courses/import/scorm${qs}`, { key, raw: body, headers });
}

/**
 * Every SCORM upload blob (`jobs/<jobId>/upload.zip`) in the bucket. The whole test run shares one bucket, so other
 * kinds' blobs (CSV uploads, exported packages) are not this file's to count.
 */
export async function scormUploadKeys(storage: Storage): Promise<string[]> {
  const keys: string[] = [];
  const stream = storage.client.listObjectsV2(storage.bucket, 'jobs/', true);
  for await (const o of stream as AsyncIterable<{ name?: string }>) {
    if (o.name?.endsWith(`/${SCORM_BLOB}`)) keys.push(o.name);
  }
  return keys.sort();
}

/** A SCORM 2004 manifest carrying our generator marker in `<metadata>`. */
export function markedManifest(title: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="lectern" version="1" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3" xmlns:lom="http://ltsc.ieee.org/xsd/LOM">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>2004 4th Edition</schemaversion>
    <lom:lom><lom:general><lom:description><lom:string>${GENERATOR_SCHEMA}</lom:string></lom:description></lom:general></lom:lom>
  </metadata>
  <organizations default="org"><organization identifier="org"><title>${title.replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))}</title>
    <item identifier="item" identifierref="sco"><title>Course</title></item></organization></organizations>
  <resources><resource identifier="sco" type="webcontent" adlcp:scormType="sco" href="index.html"><file href="index.html"/></resource></resources>
</manifest>`;
}

/**
 * A hand-made package in our layout, as far as the importer reads it: `lectern/course.json` (the course as the
 * API returns it, plus its translations) and a manifest with the generator marker. For what a real export never
 * holds (a course.json edited by hand, a theme of another workspace); the roundtrip itself uses the real export.
 */
export function exportedPackageOf(course: Record<string, unknown>, translations: unknown[]): Buffer {
  return zipOf([
    { name: 'imsmanifest.xml', data: markedManifest(String(course.title)) },
    { name: 'index.html', data: '<!doctype html><title>Player</title><script src="player.js"></script>' },
    { name: COURSE_ENTRY, data: JSON.stringify({ ...course, translations }) },
  ]);
}

export const THIRD_PARTY_DIR = path.join(REPO_ROOT, 'test/fixtures/scorm-third-party');

/** An HTML page standing in for a third-party SCO: a heading, a paragraph, a script and an image. */
export function scoPage(file: string): string {
  return `<!DOCTYPE html><html><head><title>${file}</title><script src="api.js"></script></head>
<body><h1>Heading of ${file}</h1><p>Text of <b>${file}</b>.</p><img src="pic.png" alt=""></body></html>`;
}

/**
 * A package around one of the real manifests in test/fixtures/scorm-third-party: the manifest (under `folder`
 * when given) and every file its resources reference (`xml:base` applied), HTML pages as `scoPage`.
 */
export async function thirdPartyPackage(name: string, opts: { folder?: string } = {}): Promise<Buffer> {
  const dir = path.join(THIRD_PARTY_DIR, name);
  const [manifestName] = await readdir(dir);
  const manifest = await readFile(path.join(dir, manifestName), 'utf8');
  const prefix = opts.folder ? `${opts.folder}/` : '';
  const files = new Map<string, string>();
  for (const m of manifest.matchAll(/<resource\b([^>]*?)(\/>|>([\s\S]*?)<\/resource>)/g)) {
    const attrs = m[1];
    const base = /xml:base\s*=\s*"([^"]*)"/.exec(attrs)?.[1] ?? '';
    const hrefs = [
      /\shref\s*=\s*"([^"]*)"/.exec(attrs)?.[1],
      ...[...(m[3] ?? '').matchAll(/<file\s+href\s*=\s*"([^"]*)"/g)].map((f) => f[1]),
    ];
    for (const href of hrefs) {
      if (!href) continue;
      const file = path.posix.normalize(base + href.split('?')[0]);
      files.set(file, /\.html?$/i.test(file) ? scoPage(file) : `/* ${file} */`);
    }
  }
  const entries: ZipEntryInput[] = [{ name: prefix + manifestName, data: manifest }];
  for (const [file, data] of files) entries.push({ name: prefix + file, data });
  return zipOf(entries);
}
