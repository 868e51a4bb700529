import { z } from 'zod';
import type { EntityManager } from '@lectern/db';
import { AppError, HTTP_ERRORS, isAppError } from '@lectern/errors';
import { courseDto, getCourse, getTheme, listTranslations, themeDto } from '@lectern/authoring';
import {
  buildLearnerCourse,
  pickLocale,
  type LearnerCourse,
  type LearnerTheme,
  type MediaUrl,
} from '@lectern/learner-runs';
import { playerPageHtml, type PlayerAssets } from '@lectern/player';
import type { ApiRouter } from '../http/router.js';
import type { PreviewTokens } from '../player-keys.js';
import { PLAYER_ASSETS_PATH } from './player-assets.routes.js';
import { PLAYER_TAG } from './player.routes.js';
import { EMBED_STYLE_HASHES, renderErrorPage } from './embed-page.js';
import { ANY_FRAME_ANCESTOR, newNonce, originOf, setPageHeaders } from '../http/page-security.js';
import { errorResponses } from './shared.js';

/** What the preview routes need from the process (app.ts builds it). */
export interface PreviewDeps {
  em: () => EntityManager;
  keys: () => { preview: PreviewTokens; answerKeySecret: string };
  publicUrl: string;
  /** The built player bundle; null when unbuilt (the page then answers 503). */
  assets: () => PlayerAssets | null;
  /** The Player API's resolver of `media://` references (app.ts): the preview signs them the same way. */
  mediaUrl?: (workspaceId: string) => MediaUrl;
  /** The origin signed media load from, allowed by the page's policy. */
  mediaOrigin?: string;
}

export const PREVIEW_PATH = '/preview';

const CreatePreview = z
  .object({
    lang: z
      .string()
      .min(1)
      .max(35)
      .optional()
      .meta({ description: 'Preview this translation (BCP-47); omitted: the course in its own language' }),
  })
  .meta({ id: 'CreatePreview' });

const PreviewLink = z
  .object({
    url: z.string().meta({ description: 'The preview page; works without an API key until expiresAt' }),
    expiresAt: z.string().meta({ description: 'ISO 8601; 15 minutes after the link was made' }),
  })
  .meta({ id: 'PreviewLink' });

const lastOf = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (Array.isArray(v) ? v[v.length - 1] : v));

/** The course as stored (draft or published) in the learner view, with the translation for `lang` applied. */
async function storedCourse(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  lang: string | null,
  answerKeySecret: string,
  mediaUrl: MediaUrl | undefined,
): Promise<LearnerCourse> {
  const course = courseDto(await getCourse(em, workspaceId, courseId));
  let theme: LearnerTheme | null = null;
  if (course.themeId) {
    try {
      theme = themeDto(await getTheme(em, workspaceId, course.themeId));
    } catch (err) {
      if (!isAppError(err) || err.code !== 'not_found') throw err;
    }
  }
  const translations = lang ? await listTranslations(em, workspaceId, courseId) : [];
  const locale = pickLocale(
    course.locale,
    translations.map((t) => t.locale),
    lang,
  );
  const translation = translations.find((t) => t.locale === locale) ?? null;
  // No version is given: a draft changes under the same id, so nothing of it is cached.
  return buildLearnerCourse(
    { course, translation, theme },
    { answerKeys: { secret: answerKeySecret }, mediaUrl },
  );
}

/**
 * Authors' preview: `POST /api/v1/courses/:id/preview` signs a 15-minute link to `GET /preview/:courseId?token=…`,
 * which boots the same player bundle in preview mode with the course as stored (draft or published). The page
 * opens no run, counts no view and emits no event: the player in preview mode never calls the Player API.
 * The token rides in the query, not the path, so the request log (path only) never records it.
 */
export function previewRoutes(api: ApiRouter, pub: ApiRouter, deps: PreviewDeps): void {
  const publicOrigin = originOf(deps.publicUrl);
  api.route(
    {
      method: 'post',
      path: '/courses/:id/preview',
      operationId: 'createCoursePreviewLink',
      summary: 'A short-lived link that shows the course as stored (drafts too) in the player',
      description:
        'Answers 200 with `url` (`/preview/:courseId?token=…`, no API key needed) and `expiresAt` (15 minutes). ' +
        'The page renders the course as it is stored now, draft or published, in the optional `lang` ' +
        "translation (the course's own language when there is none), with the same player in preview mode: no " +
        'run is opened, no view counted, no event emitted, answers are not graded. Every plan. Nothing is stored: ' +
        'each call signs a new link.',
      tags: ['Courses'],
      body: CreatePreview,
      responses: {
        200: { description: 'The preview link', schema: z.object({ data: PreviewLink }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const workspaceId = ctx.state.auth.workspace.id;
      const lang = ctx.state.body.lang ?? null;
      // 404 for an unknown course or another workspace's, before anything is signed.
      const course = await getCourse(deps.em(), workspaceId, ctx.params.id);
      const { token, expiresAt } = await deps.keys().preview.sign({ courseId: course.id, workspaceId, lang });
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        data: {
          url: `${deps.publicUrl}${PREVIEW_PATH}/${encodeURIComponent(course.id)}?token=${token}`,
          expiresAt: expiresAt.toISOString(),
        },
      };
    },
  );

  pub.route(
    {
      method: 'get',
      path: `${PREVIEW_PATH}/:courseId`,
      operationId: 'getPreviewPage',
      summary: "An author's preview page (HTML that boots the player in preview mode)",
      description:
        'Opened through the link `POST /api/v1/courses/:id/preview` returns. 401 for an expired, forged or ' +
        "another course's token, 404 when the course was deleted since, 503 when the player bundle is not built; " +
        'all plain HTML. Never cached (`Cache-Control: no-store`), never indexed (`X-Robots-Tag: noindex`).',
      tags: [PLAYER_TAG],
      auth: 'public',
      query: z.object({
        token: lastOf.meta({ description: 'The signed preview token from the link' }),
      }),
      responses: {
        200: { description: 'The preview page', contentType: 'text/html' },
        401: { description: 'Preview link refused (HTML)', contentType: 'text/html' },
        404: { description: 'Course not found (HTML)', contentType: 'text/html' },
        503: { description: 'The player bundle is not built (HTML)', contentType: 'text/html' },
      },
    },
    async (ctx) => {
      ctx.set('Cache-Control', 'no-store');
      ctx.set('X-Robots-Tag', 'noindex');
      const styleNonce = newNonce();
      setPageHeaders(ctx, {
        frameAncestors: ANY_FRAME_ANCESTOR,
        styleHashes: EMBED_STYLE_HASHES,
        styleNonce,
        publicOrigin,
        mediaOrigin: deps.mediaOrigin,
        // The preview token rides in the URL.
        referrerPolicy: 'no-referrer',
      });
      ctx.type = 'html';
      try {
        const keys = deps.keys();
        const token = ctx.state.query.token;
        if (!token) throw new AppError('unauthorized', 'Preview link refused: it carries no token');
        const claims = await keys.preview.verify(token, ctx.params.courseId);
        const assets = deps.assets();
        if (!assets) throw new AppError('unavailable', 'The player bundle is not built');
        const course = await storedCourse(
          deps.em(),
          claims.workspaceId,
          claims.courseId,
          claims.lang,
          keys.answerKeySecret,
          deps.mediaUrl?.(claims.workspaceId),
        );
        ctx.body = playerPageHtml({
          config: { mode: 'preview', course, lang: claims.lang },
          assets,
          assetBase: PLAYER_ASSETS_PATH,
          title: course.title,
          lang: course.locale,
          dir: course.direction,
          styleNonce,
        });
      } catch (caught) {
        if (!isAppError(caught)) throw caught;
        if (!['unauthorized', 'not_found', 'unavailable'].includes(caught.code)) throw caught;
        const status = HTTP_ERRORS[caught.code].status;
        ctx.status = status;
        ctx.body = renderErrorPage(status, status === 401 ? PREVIEW_REFUSED : undefined);
      }
    },
  );
}

const PREVIEW_REFUSED = {
  title: 'Preview link expired',
  text: 'This preview link has expired or is not valid. Open the preview again from the editor.',
};
