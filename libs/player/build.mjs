#!/usr/bin/env node
/**
 * Bundles the browser player once: `node libs/player/build.mjs [outdir]` (default `dist/player`, which
 * `npm run build` fills and the production image ships). Writes `player-<hash>.js`, `player-<hash>.css` and
 * `manifest.json` (file names, bytes, gzipped bytes), and prints the gzipped total against the 60 KB
 * budget. esbuild is a build-time tool (devDependency); the server only reads what this wrote
 * (`playerAssets()` in src/index.ts).
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
export const BUDGET_GZIP_BYTES = 60 * 1024;

export async function buildPlayer(outdir = path.join(root, 'dist', 'player')) {
  mkdirSync(outdir, { recursive: true });
  for (const f of readdirSync(outdir)) if (/^player-.*\.(js|css|map)$/.test(f)) rmSync(path.join(outdir, f));
  const result = await build({
    entryPoints: { player: path.join(here, 'src/browser/main.tsx') },
    bundle: true,
    minify: true,
    format: 'iife',
    // Browsers of the last few years, including the one inside LMS frames.
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    outdir,
    metafile: true,
    legalComments: 'none',
    tsconfig: path.join(here, 'tsconfig.browser.json'),
    logLevel: 'warning',
  });
  const files = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const js = files.find((f) => f.endsWith('.js'));
  const css = files.find((f) => f.endsWith('.css'));
  if (!js || !css) throw new Error(`player build wrote ${files.join(', ')}; expected a .js and a .css`);
  const sizes = (name) => {
    const body = readFileSync(path.join(outdir, name));
    return { file: name, bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
  };
  const manifest = { js: sizes(js), css: sizes(css) };
  manifest.gzipBytes = manifest.js.gzipBytes + manifest.css.gzipBytes;
  manifest.budgetGzipBytes = BUDGET_GZIP_BYTES;
  writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  return { outdir, manifest };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : undefined;
  const { outdir, manifest } = await buildPlayer(out);
  const kb = (n) => (n / 1024).toFixed(1) + ' KB';
  process.stdout.write(
    `player: ${path.relative(root, outdir) || outdir}: ${manifest.js.file} ${kb(manifest.js.gzipBytes)} gz, ` +
      `${manifest.css.file} ${kb(manifest.css.gzipBytes)} gz; total ${kb(manifest.gzipBytes)} gz ` +
      `(budget ${kb(BUDGET_GZIP_BYTES)})\n`,
  );
  if (manifest.gzipBytes > BUDGET_GZIP_BYTES) {
    process.stderr.write('player: over the size budget\n');
    process.exit(1);
  }
}
