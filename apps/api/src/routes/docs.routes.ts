import { z } from 'zod';
import { DOCS_HTML, type buildOpenApi } from '../http/openapi.js';
import type { ApiRouter } from '../http/router.js';

type OpenApiDocument = ReturnType<typeof buildOpenApi>;

/**
 * The API reference: the OpenAPI 3.1 document and a readable page over it. `document` builds the document from
 * every router; it is built on the first request (every route is registered by then) and kept.
 */
export function docsRoutes(pub: ApiRouter, opts: { prefix: string; document: () => OpenApiDocument }) {
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
      summary: 'Readable API reference',
      description:
        'An HTML page that loads openapi.json and lists the operations by tag, each with its contract.',
      tags: ['Docs'],
      auth: 'public',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    },
    (ctx) => {
      ctx.type = 'html';
      ctx.body = DOCS_HTML;
    },
  );
}
