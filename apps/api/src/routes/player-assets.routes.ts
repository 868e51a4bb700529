import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { playerAssets, type PlayerAssets } from '@lectern/player';
import { AppError } from '@lectern/errors';
import { ErrorBody } from '@lectern/contracts';
import type { Logger } from '@lectern/log';
import type { ApiRouter } from '../http/router.js';

export const PLAYER_ASSETS_PATH = '/player/assets';

/**
 * The built player bundle (`npm run build` writes dist/player), read once on first use. A process started from
 * sources without a build serves the embed page without the bundle (its config is still there for a headless
 * player) and says so once in the log, rather than failing to start.
 */
export function lazyPlayerAssets(log: Logger, dir?: string): () => PlayerAssets | null {
  let loaded: PlayerAssets | null | undefined;
  return () => {
    if (loaded !== undefined) return loaded;
    try {
      loaded = playerAssets(dir);
    } catch (err) {
      log.warn({ err }, 'player bundle not built: the embed page is served without it (run npm run build)');
      loaded = null;
    }
    return loaded;
  };
}

/** The bundle's URLs for the embed page: same origin, content-hashed names. */
export function playerAssetUrls(assets: () => PlayerAssets | null): () => { js: string; css: string } | null {
  return () => {
    const a = assets();
    return a
      ? { js: `${PLAYER_ASSETS_PATH}/${a.js.file}`, css: `${PLAYER_ASSETS_PATH}/${a.css.file}` }
      : null;
  };
}

/** One asset's bytes as served: each encoding with its own strong ETag (the bytes differ, so the tags do). */
interface EncodedAsset {
  contentType: string;
  variants: Record<AssetEncoding, { body: Buffer; etag: string }>;
}
type AssetEncoding = 'br' | 'gzip' | 'identity';
const ASSET_ENCODINGS: AssetEncoding[] = ['br', 'gzip', 'identity'];

const variant = (body: Buffer) => ({
  body,
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
});

/**
 * The bundle's files read and compressed once (brotli at its best quality, gzip at level 9): a request only
 * picks the variant its Accept-Encoding allows. The same build gives the same bytes, so every replica answers
 * the same ETag for the same file and encoding.
 */
export function encodePlayerAssets(
  assets: () => PlayerAssets | null,
): () => Map<string, EncodedAsset> | null {
  let encoded: Map<string, EncodedAsset> | null | undefined;
  return () => {
    if (encoded !== undefined) return encoded;
    const a = assets();
    if (!a) return (encoded = null);
    encoded = new Map();
    for (const file of [a.js, a.css]) {
      const raw = readFileSync(file.path);
      encoded.set(file.file, {
        contentType: file.contentType,
        variants: {
          br: variant(
            brotliCompressSync(raw, {
              params: {
                [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY,
                [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
                [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length,
              },
            }),
          ),
          gzip: variant(gzipSync(raw, { level: 9 })),
          identity: variant(raw),
        },
      });
    }
    return encoded;
  };
}

/**
 * GET /player/assets/:name — only the two hashed files of the current build; cached for a year (immutable),
 * brotli or gzip by Accept-Encoding (`Vary: Accept-Encoding`), a 304 for a matching If-None-Match. The files are
 * compressed when the routes are set up, not per request.
 */
export function playerAssetRoutes(pub: ApiRouter, assets: () => PlayerAssets | null): void {
  const encoded = encodePlayerAssets(assets);
  encoded();
  pub.route(
    {
      method: 'get',
      path: `${PLAYER_ASSETS_PATH}/:name`,
      operationId: 'getPlayerAsset',
      summary: 'The player bundle (script and stylesheet) the embed page loads',
      description:
        'Content-hashed file names, so a response never changes: `Cache-Control: public, max-age=31536000, immutable`. ' +
        'Compressed with brotli or gzip as `Accept-Encoding` allows (`Vary: Accept-Encoding`); each encoding has its ' +
        'own ETag and a matching `If-None-Match` answers 304.',
      tags: ['Player API'],
      auth: 'public',
      responses: {
        200: {
          description: 'The file (application/javascript or text/css)',
          contentType: 'application/javascript',
        },
        304: { description: 'Not modified (If-None-Match matched the ETag of this encoding)' },
        404: { description: 'No such file in the current build', schema: ErrorBody },
      },
    },
    (ctx) => {
      const file = assets()?.byName(ctx.params.name);
      const asset = file ? encoded()?.get(file.file) : undefined;
      if (!asset) throw new AppError('not_found', 'No such player asset');
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.vary('Accept-Encoding');
      // The smallest encoding the client accepts at all (q > 0, `*` counted): brotli, then gzip, else the plain
      // bytes. Browsers list gzip first at equal weight, so the client's order is not a preference here.
      const encoding = ASSET_ENCODINGS.find((e) => e === 'identity' || ctx.acceptsEncodings(e) === e)!;
      const chosen = asset.variants[encoding];
      ctx.set('ETag', chosen.etag);
      if (encoding !== 'identity') ctx.set('Content-Encoding', encoding);
      ctx.type = asset.contentType;
      const match = ctx.get('If-None-Match');
      if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === chosen.etag)) {
        ctx.status = 304;
        return;
      }
      ctx.length = chosen.body.length;
      ctx.body = chosen.body;
    },
  );
}
