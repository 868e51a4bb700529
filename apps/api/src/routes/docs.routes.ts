import { z } from 'zod';
import { AppError } from '@lectern/errors';
import { ErrorBody } from '@lectern/contracts';
import type { buildOpenApi } from '../http/openapi.js';
import { API_REFERENCE_HTML, apiReferencePolicy, referenceAssets } from '../http/api-reference.js';
import type { ApiRouter } from '../http/router.js';

type OpenApiDocument = ReturnType<typeof buildOpenApi>;

/**
 * The API reference: the OpenAPI 3.1 document and a readable page over it. `document` builds the document from
 * every router; it is built on the first request (every route is registered by then) and kept.
 */
export function docsRoutes(
  pub: ApiRouter,
  opts: { prefix: string; document: () => OpenApiDocument; publicOrigin?: string },
) {
  let cached: OpenApiDocument | undefined;
  pub.route(
    {
      method: 'get',
      path: `${opts.prefix}/openapi.json`,
      operationId: 'getOpenApiDocument',
      summary: 'This OpenAPI 3.1 document',
      description:
        'Built from the route contracts, the same ones that validate requests, so it cannot drift from what the service answers. Every operation has a stable operationId (docs/authoring.md, "Operation names").',
      tags: ['Docs'],
      auth: 'public',
      responses: { 200: { description: 'OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    },
    (ctx) => {
      cached ??= opts.document();
      ctx.body = cached;
    },
  );
  pub.route(
    {
      method: 'get',
      path: `${opts.prefix}/docs`,
      operationId: 'getApiReference',
      summary: 'The API reference (search and try-it)',
      description:
        "Scalar's reference UI over openapi.json, every asset served by the service itself (no CDN, no request leaves the service): /api/v1 and /player/v1, with search and a try-it console that calls this service.",
      tags: ['Docs'],
      auth: 'public',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    },
    (ctx) => {
      ctx.set('Content-Security-Policy', apiReferencePolicy(opts.publicOrigin));
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.type = 'html';
      ctx.body = API_REFERENCE_HTML;
    },
  );
  pub.route(
    {
      method: 'get',
      path: `${opts.prefix}/docs/assets/:name`,
      operationId: 'getApiReferenceAsset',
      summary: 'A script of the API reference page',
      description:
        '`scalar.js` (the reference UI bundle, shipped with the service) and `init.js`; gzip when accepted, ETag, cached for an hour.',
      tags: ['Docs'],
      auth: 'public',
      responses: {
        200: { description: 'The script', contentType: 'application/javascript' },
        404: { description: 'No such asset', schema: ErrorBody },
      },
    },
    (ctx) => {
      const file = referenceAssets().get(ctx.params.name);
      if (!file) throw new AppError('not_found', 'No such asset');
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.set('ETag', file.etag);
      ctx.vary('Accept-Encoding');
      if (ctx.get('If-None-Match') === file.etag) {
        ctx.status = 304;
        return;
      }
      ctx.type = file.contentType;
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = file.gzip;
      } else {
        ctx.body = file.body;
      }
    },
  );
}
