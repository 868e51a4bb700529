import { createReadStream } from 'node:fs';
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

/** GET /player/assets/:name — only the two hashed files of the current build; cached for a year (immutable). */
export function playerAssetRoutes(pub: ApiRouter, assets: () => PlayerAssets | null): void {
  pub.route(
    {
      method: 'get',
      path: `${PLAYER_ASSETS_PATH}/:name`,
      operationId: 'getPlayerAsset',
      summary: 'The player bundle (script and stylesheet) the embed page loads',
      description:
        'Content-hashed file names, so a response never changes: `Cache-Control: public, max-age=31536000, immutable`.',
      tags: ['Player API'],
      auth: 'public',
      responses: {
        200: {
          description: 'The file (application/javascript or text/css)',
          contentType: 'application/javascript',
        },
        404: { description: 'No such file in the current build', schema: ErrorBody },
      },
    },
    (ctx) => {
      const file = assets()?.byName(ctx.params.name);
      if (!file) throw new AppError('not_found', 'No such player asset');
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.type = file.contentType;
      ctx.length = file.bytes;
      ctx.body = createReadStream(file.path);
    },
  );
}
