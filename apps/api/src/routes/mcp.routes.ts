import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import type { Context, Next } from 'koa';
import inject from 'light-my-request';
import { z } from 'zod';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AppError } from '@lectern/errors';
import {
  buildRequest,
  catalogueFromOpenApi,
  createLecternMcpServer,
  decodeBody,
  parseToolsets,
  ToolsetError,
  UnknownOperationError,
  type BinaryStore,
  type Catalogue,
  type OpenApiDocument,
  type OperationCaller,
} from '@lectern/mcp';
import type { Logger } from '@lectern/log';
import type { Storage } from '@lectern/storage';
import type { MikroORM } from '@lectern/db';
import { authMiddleware } from '../http/auth.js';
import type { ApiRouter } from '../http/router.js';
import { errorResponses } from './shared.js';

export const MCP_PATH = '/mcp';
/** A binary answer's link (a presigned GET of the object store) lives this long. */
const LINK_SECONDS = 10 * 60;
/** JSON-RPC messages carry whole courses (call_operation updateCourse): the same room as the largest JSON route. */
const MCP_BODY_LIMIT = 4 * 1024 * 1024;
const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

export interface McpRouteDeps {
  orm: MikroORM;
  storage: Storage;
  log: Logger;
  cfg: { PUBLIC_URL: string; RATE_LIMIT_PER_MINUTE: number };
  /** The app's own request listener (`app.callback()`): every operation runs through it, as its REST call. */
  dispatch: () => RequestListener;
  openapi: () => unknown;
}

const isLoopbackOrigin = (origin: string) => {
  try {
    return LOOPBACK_HOSTS.includes(new URL(origin).hostname);
  } catch {
    return false;
  }
};

/**
 * DNS-rebinding defence as the MCP transport specification asks (and as the SDK's hostHeaderValidation does, port
 * left aside): the Host must be PUBLIC_URL's host name or a loopback name, and an Origin, when a browser sends one,
 * PUBLIC_URL's origin or a loopback one. Checked before the key, so a rebound page learns nothing.
 */
export function mcpHostCheck(publicUrl: string) {
  const pub = new URL(publicUrl);
  const hosts = new Set([pub.hostname, ...LOOPBACK_HOSTS]);
  return async (ctx: Context, next: Next) => {
    // Host names compare without case (RFC 9110 4.2.3), as URL parsing leaves PUBLIC_URL's.
    if (!hosts.has(ctx.hostname.toLowerCase()))
      throw new AppError('forbidden', `This endpoint answers only requests addressed to ${pub.host}`);
    const origin = ctx.get('origin');
    if (origin && origin !== pub.origin && !isLoopbackOrigin(origin))
      throw new AppError('origin_not_allowed', `Origin ${origin.slice(0, 200)} may not call ${MCP_PATH}`);
    await next();
  };
}

/**
 * Runs operations through the app's own request listener: an in-process HTTP request carrying the caller's
 * Authorization header, so the key check, rate limit, 402, scope, plan gate, validation and workspace scoping are
 * the REST call's own, and nothing here decides any of them.
 */
function inProcessCaller(
  dispatch: RequestListener,
  catalogue: Catalogue,
  from: { authorization: string; requestId: string; ip: string; host: string },
): OperationCaller {
  return {
    async call(operationId, input) {
      const op = catalogue.byId.get(operationId);
      if (!op) throw new UnknownOperationError(operationId);
      const req = buildRequest(op, input);
      const res = await inject(dispatch, {
        method: req.method,
        url: req.url,
        headers: {
          ...req.headers,
          authorization: from.authorization,
          'x-request-id': from.requestId,
          host: from.host,
        },
        remoteAddress: from.ip,
        ...(req.payload === undefined ? {} : { payload: req.payload }),
      });
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = String(v);
      return { status: res.statusCode, body: decodeBody(headers['content-type'], res.rawPayload), headers };
    },
  };
}

/** Binary answers go to the object store under mcp-downloads/, handed out as a presigned GET, removed after. */
function storageLinks(storage: Storage, workspaceId: string, log: Logger): BinaryStore {
  return {
    async save(bytes, meta) {
      const key = `mcp-downloads/${workspaceId}/${randomUUID()}`;
      await storage.put(key, Buffer.from(bytes), meta.contentType);
      const url = await storage.presignGet(key, LINK_SECONDS, { filename: meta.filename });
      setTimeout(() => {
        storage.remove(key).catch((err: unknown) => log.warn({ err, key }, 'mcp download not removed'));
      }, LINK_SECONDS * 1000).unref();
      return { url, expiresAt: new Date(Date.now() + LINK_SECONDS * 1000).toISOString() };
    },
  };
}

const McpQuery = z.object({
  toolsets: z
    .string()
    .max(200)
    .optional()
    .describe(
      'Comma-separated toolsets (operations, authoring, delivery; default all); or the X-MCP-Toolsets header',
    ),
});

const JsonRpcMessage = z.record(z.string(), z.unknown());
const McpBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).max(100)]);

/** The MCP tool server over Streamable HTTP: stateless, one server per request, the API key as Bearer. */
export function mcpRoutes(pub: ApiRouter, deps: McpRouteDeps) {
  let catalogue: Catalogue | undefined;
  // Built on first use: every route is registered by then, so a new route is a new operation with no change here.
  const catalogueOf = () => (catalogue ??= catalogueFromOpenApi(deps.openapi() as OpenApiDocument));
  pub.route(
    {
      method: 'post',
      path: MCP_PATH,
      operationId: 'sendMcpMessage',
      summary: 'MCP tool server (Streamable HTTP)',
      description:
        'A Model Context Protocol endpoint (stateless Streamable HTTP, JSON responses) for AI tool clients: tools ' +
        'search_operations and call_operation reach every /api/v1 operation with this key, plus workflow tools, ' +
        'resources and prompts (docs/mcp.md). Each operation a tool runs is its REST call with this key: same ' +
        'scope, plan gate, rate limit and validation. The Host must be the service’s public host (or loopback).',
      tags: ['Tool server'],
      query: McpQuery,
      body: McpBody,
      bodyLimit: MCP_BODY_LIMIT,
      responses: {
        200: { description: 'The JSON-RPC response', schema: z.unknown() },
        202: { description: 'A notification or response accepted (no body)', schema: null },
        ...errorResponses,
        403: {
          description: 'forbidden (Host not the public host) or origin_not_allowed',
          schema: errorResponses[403].schema,
        },
        406: {
          description: 'JSON-RPC error: Accept must list application/json and text/event-stream',
          schema: z.unknown(),
        },
      },
    },
    mcpHostCheck(deps.cfg.PUBLIC_URL),
    authMiddleware({
      orm: deps.orm,
      rateLimitPerMinute: deps.cfg.RATE_LIMIT_PER_MINUTE,
      scopeByMethod: false,
    }),
    async (ctx) => {
      let toolsets;
      try {
        toolsets = parseToolsets(ctx.state.query.toolsets ?? ctx.get('x-mcp-toolsets'));
      } catch (err) {
        if (!(err instanceof ToolsetError)) throw err;
        const where =
          ctx.state.query.toolsets === undefined ? ['headers', 'x-mcp-toolsets'] : ['query', 'toolsets'];
        throw new AppError('invalid_request', err.message, {
          issues: [{ code: 'invalid_value', path: where, message: err.message }],
        });
      }
      const { auth } = ctx.state;
      const server = createLecternMcpServer({
        catalogue: catalogueOf(),
        caller: inProcessCaller(deps.dispatch(), catalogueOf(), {
          authorization: ctx.get('authorization'),
          requestId: ctx.state.requestId,
          ip: ctx.ip,
          host: ctx.host,
        }),
        binary: storageLinks(deps.storage, auth.workspace.id, deps.log),
        toolsets,
        readOnly: auth.scope !== 'write',
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      try {
        await server.connect(transport);
        const headers = new Headers();
        for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
          const v = ctx.get(name);
          if (v) headers.set(name, v);
        }
        const request = new Request(new URL(ctx.originalUrl, 'http://mcp.internal'), {
          method: 'POST',
          headers,
        });
        const res = await transport.handleRequest(request, { parsedBody: ctx.state.body });
        ctx.status = res.status;
        res.headers.forEach((v, k) => ctx.set(k, v));
        // A notification's 202 has no body; an empty string keeps Koa from writing the status text instead.
        ctx.body = await res.text();
      } finally {
        await server.close();
      }
    },
  );
}
