import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import unzipper from 'unzipper';
import { checkContract } from './contract.js';

/** The ADL/IMS schemas kept in the repo (test/fixtures/scorm-xsd/README.md). */
const XSD_DIR = path.join(process.cwd(), 'test/fixtures/scorm-xsd');
export const SCHEMAS = {
  scorm12: path.join(XSD_DIR, '1.2/manifest-1.2.xsd'),
  // The 2004 wrapper plus IEEE LOM, so the metadata record is checked too, not only skipped as lax content.
  scorm2004: path.join(XSD_DIR, '2004-4th/manifest-2004-lom.xsd'),
} as const;

/**
 * `xmllint --noout --nonet --schema` on a manifest: resolves when it validates, throws with xmllint's report
 * otherwise (the exit status decides; xmllint also prints harmless import notices on success).
 */
export async function validateManifest(xml: string, version: keyof typeof SCHEMAS): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-manifest-'));
  const file = path.join(dir, 'imsmanifest.xml');
  try {
    await writeFile(file, xml);
    await promisify(execFile)('xmllint', ['--noout', '--nonet', '--schema', SCHEMAS[version], file]);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`imsmanifest.xml (${version}) does not validate:\n${e.stderr ?? e.message}\n${xml}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface Zip {
  status: number;
  headers: Headers;
  bytes: Buffer;
  /** Path → bytes of every entry (only for a 200). */
  entries: Map<string, Buffer>;
  /** The error body when the status is not 200. */
  error: {
    error: string;
    message: string;
    issues?: { code: string; path: (string | number)[]; message: string }[];
    jobId?: string;
  } | null;
}

/**
 * GET a package and unzip it in memory (test packages are small); every manifest of a 200 is validated against
 * the XSDs of its version (from the file name), so no exported manifest escapes the check. Error bodies are
 * parsed and contract-checked.
 */
export async function getZip(base: string, key: string, pathAndQuery: string): Promise<Zip> {
  const res = await fetch(base + pathAndQuery, { headers: { authorization: `Bearer ${key}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  const entries = new Map<string, Buffer>();
  let error: Zip['error'] = null;
  if (res.status === 200) {
    const dir = await unzipper.Open.buffer(bytes);
    for (const f of dir.files) if (f.type === 'File') entries.set(f.path, await f.buffer());
    const version = /-(scorm12|scorm2004)\.zip"$/.exec(res.headers.get('content-disposition') ?? '')?.[1];
    if (!version) throw new Error(`no version in ${res.headers.get('content-disposition')}`);
    const manifest = entries.get('imsmanifest.xml');
    if (!manifest) throw new Error(`no imsmanifest.xml in ${[...entries.keys()].join(', ')}`);
    await validateManifest(manifest.toString('utf8'), version as keyof typeof SCHEMAS);
    await checkContract(base + pathAndQuery, 'GET', 200, res.headers.get('content-type'), null);
  } else {
    error = JSON.parse(bytes.toString('utf8')) as Zip['error'];
    await checkContract(base + pathAndQuery, 'GET', res.status, res.headers.get('content-type'), error);
  }
  return { status: res.status, headers: res.headers, bytes, entries, error };
}

/** The JSON config inside index.html or a page of the service (`<script type="application/json" id="lectern-player-config">`). */
export function configOf(html: string): Record<string, unknown> {
  const m = /<script type="application\/json" id="lectern-player-config"[^>]*>([\s\S]*?)<\/script>/.exec(
    html,
  );
  if (!m) throw new Error(`no player config in index.html:\n${html}`);
  return JSON.parse(m[1]) as Record<string, unknown>;
}

/** The string value of an XPath over a manifest, read back by libxml2 (what an LMS's parser sees). */
export async function xpathString(xml: string, expr: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-manifest-'));
  const file = path.join(dir, 'imsmanifest.xml');
  try {
    await writeFile(file, xml);
    const { stdout } = await promisify(execFile)('xmllint', ['--nonet', '--xpath', `string(${expr})`, file]);
    return stdout.replace(/\n$/, '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
