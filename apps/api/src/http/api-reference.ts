import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';

/**
 * The API reference page: Scalar's standalone bundle (`@scalar/api-reference`, served from node_modules, never a
 * CDN) over the service's own OpenAPI document, with search and try-it. docs/client.md "API reference".
 *
 * The page has no inline script: `init.js` (ours, below) reads its settings from data attributes and mounts the
 * reference. Scalar writes its styles at run time, so this one page allows inline styles; scripts, requests,
 * fonts and images stay on the service (no default fonts, no proxy, no telemetry).
 */

export interface ReferenceAsset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  contentType: string;
}

function asset(body: Buffer, contentType: string): ReferenceAsset {
  return {
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    contentType,
  };
}

/** What init.js passes to Scalar: everything that would reach another host is switched off. */
export const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  hideClientButton: false,
  showDeveloperTools: 'never',
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideDarkModeToggle: false,
  defaultOpenAllTags: false,
  documentDownloadType: 'json',
  metaData: { title: 'Lectern API reference' },
} as const;

const INIT_JS = `(function () {
  var el = document.getElementById('app');
  var config = JSON.parse(el.getAttribute('data-configuration'));
  config.url = el.getAttribute('data-url');
  window.Scalar.createApiReference(el, config);
})();
`;

let loaded: Map<string, ReferenceAsset> | undefined;

/** `scalar.js` (the bundle) and `init.js`, read and compressed once on first use. */
export function referenceAssets(): Map<string, ReferenceAsset> {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const bundle = readFileSync(require.resolve('@scalar/api-reference/browser/standalone.js'));
  loaded = new Map([
    ['scalar.js', asset(bundle, 'application/javascript; charset=utf-8')],
    ['init.js', asset(Buffer.from(INIT_JS), 'application/javascript; charset=utf-8')],
  ]);
  return loaded;
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The page: relative URLs, so it works under any host name the service is reached by. */
export const API_REFERENCE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lectern API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
</head><body>
<noscript>The reference needs JavaScript; the machine-readable document is <a href="openapi.json">openapi.json</a> (OpenAPI 3.1).</noscript>
<div id="app" data-url="openapi.json" data-configuration="${escapeAttr(JSON.stringify(SCALAR_CONFIGURATION))}"></div>
<script src="docs/assets/scalar.js"></script>
<script src="docs/assets/init.js"></script>
</body></html>`;

/**
 * The page's policy: the strict page policy's shape, but inline styles allowed (Scalar injects its theme and
 * component styles at run time; no hash list can name them) and no framing.
 */
export function apiReferencePolicy(publicOrigin?: string): string {
  const self = ["'self'", ...(publicOrigin ? [publicOrigin] : [])].join(' ');
  return [
    "default-src 'none'",
    `script-src ${self}`,
    `style-src ${self} 'unsafe-inline'`,
    `img-src ${self} data: blob:`,
    `font-src ${self} data:`,
    `connect-src ${self}`,
    `worker-src ${self} blob:`,
    `form-action ${self}`,
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
