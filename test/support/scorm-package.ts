/**
 * A SCORM package's runnable part for the runtime tests, and an LMS page that plays it in scorm-again.
 *
 * `exportedScormPackage` downloads a course's real export (`GET /courses/:id/scorm`, its manifest validated
 * against the XSDs on the way) and unzips it into a directory the LMS page serves: what runs in scorm-again is
 * exactly what a customer uploads to their LMS.
 */
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { configOf, getZip } from './scorm.js';

export type ScormVersionForTest = '1.2' | '2004';

export async function exportedScormPackage(
  base: string,
  key: string,
  courseId: string,
  version: ScormVersionForTest,
  opts: { track?: boolean } = {},
): Promise<{ dir: string; config: Record<string, unknown> }> {
  const query = `version=${version === '1.2' ? 'scorm12' : 'scorm2004'}${opts.track ? '&track=1' : ''}`;
  const zip = await getZip(base, key, `/courses/${encodeURIComponent(courseId)}/scorm?${query}`);
  if (zip.status !== 200)
    throw new Error(`export of ${courseId}: ${zip.status} ${JSON.stringify(zip.error)}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lectern-sco-'));
  for (const [name, bytes] of zip.entries) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, bytes);
  }
  return { dir, config: configOf(zip.entries.get('index.html')?.toString('utf8') ?? '') };
}

/** Content types an LMS's file server would send for what a package holds. */
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript',
  css: 'text/css',
  json: 'application/json',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  mp4: 'video/mp4',
  webm: 'video/webm',
  m4a: 'audio/mp4',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wav: 'audio/wav',
  woff2: 'font/woff2',
  woff: 'font/woff',
  ttf: 'font/ttf',
  otf: 'font/otf',
};

const SCORM_AGAIN = path.join(process.cwd(), 'node_modules', 'scorm-again', 'dist');

/**
 * The LMS: `/lms` loads scorm-again; in the page, `lms.launch(version, pkg, cmi)` sets `window.API` or
 * `window.API_1484_11` (loading `cmi`, a previous session's data, first), counts the SCO's calls and frames
 * `/pkg/<pkg>/index.html`; `lms.unload()` removes the frame (the SCO's pagehide) and keeps the API to read.
 */
export async function startLmsServer(): Promise<{
  url: string;
  addPackage(name: string, dir: string): void;
  close(): Promise<void>;
}> {
  const packages = new Map<string, string>();
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>LMS</title>
<script src="/scorm-again/scorm12.js"></script><script src="/scorm-again/scorm2004.js"></script></head><body>
<script>
window.lms = {
  calls: {},
  launch: function (version, pkg, cmi) {
    var settings = { autocommit: false, lmsCommitUrl: false, logLevel: 5 };
    var api = version === '1.2' ? new Scorm12API(settings) : new Scorm2004API(settings);
    if (cmi) api.loadFromJSON(cmi);
    var calls = (window.lms.calls = {});
    var names = version === '1.2' ? ['LMSInitialize', 'LMSFinish', 'LMSCommit'] : ['Initialize', 'Terminate', 'Commit'];
    names.forEach(function (n) { api.on(n, function () { calls[n] = (calls[n] || 0) + 1; }); });
    delete window.API; delete window.API_1484_11;
    if (version === '1.2') window.API = api; else window.API_1484_11 = api;
    window.lms.api = api;
    var frame = document.createElement('iframe');
    frame.id = 'sco';
    frame.title = 'Course';
    frame.style.width = '100%';
    frame.style.height = '700px';
    frame.src = '/pkg/' + pkg + '/index.html';
    document.body.appendChild(frame);
  },
  unload: function () { var f = document.getElementById('sco'); if (f) f.remove(); },
  cmi: function () { return JSON.parse(JSON.stringify(window.lms.api.cmi)); }
};
</script></body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] === 'lms') return send(200, 'text/html; charset=utf-8', page);
    if (parts[0] === 'favicon.ico') return send(204, 'image/x-icon', '');
    if (parts[0] === 'scorm-again' && /^scorm(12|2004)\.js$/.test(parts[1] ?? ''))
      return send(200, 'text/javascript', readFileSync(path.join(SCORM_AGAIN, parts[1])));
    // A package's root files, and its fonts/ and media/ (the files the export fetched).
    const inPackage =
      parts[0] === 'pkg' &&
      packages.has(parts[1] ?? '') &&
      (parts.length === 3 || (parts.length === 4 && /^(fonts|media)$/.test(parts[2]))) &&
      /^[\w.-]+$/.test(parts[parts.length - 1]);
    if (inPackage) {
      const file = path.join(packages.get(parts[1])!, ...parts.slice(2));
      const type = TYPES[path.extname(file).slice(1)] ?? 'application/octet-stream';
      try {
        return send(200, type, readFileSync(file));
      } catch {
        return send(404, 'text/plain', 'no');
      }
    }
    send(404, 'text/plain', 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    addPackage: (name, dir) => packages.set(name, dir),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
