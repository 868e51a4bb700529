import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { koaBody, HttpMethodEnum } from 'koa-body';
import { z } from 'zod';
import { AppError, inputIssue, issuesFromZod } from '@lectern/errors';
import type { AuthState } from './auth.js';
import type { ApiTag } from './tags.js';

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/**
 * The verbs an operationId may start with. operationIds are a public contract (docs/authoring.md, "Operation
 * names"): the typed client's methods and the tool server's tools are named after them, so a new verb is a
 * deliberate addition here, not a spelling chosen per route.
 */
export const OPERATION_VERBS = [
  'list',
  'get',
  'create',
  'update',
  'delete',
  'upsert',
  'import',
  'export',
  'add',
  'move',
  'remove',
  'send',
  'resend',
  'verify',
  'open',
  'report',
  'retake',
  'rotate',
  'upload',
] as const;

export type OperationVerb = (typeof OPERATION_VERBS)[number];

/** Verb + resource in camelCase (`listCourses`, `importCourseFromScorm`); stable once published. */
export type OperationId = `${OperationVerb}${Capitalize<string>}`;

export interface ResponseSpec {
  description: string;
  /** Schema of the whole body; null for an empty body (204). */
  schema?: z.ZodType | null;
  contentType?: string;
  /** The same status in other media types, chosen by the request's Accept (e.g. a PDF or its JSON record). */
  alternatives?: Record<string, z.ZodType>;
}

/** A route's contract: the single source for validation and the OpenAPI document. */
export interface RouteSpec<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
> {
  method: Method;
  path: string;
  /** The operation's public name: unique across every router, never derived from the path. */
  operationId: OperationId;
  /** One line, shown next to the path. */
  summary: string;
  /** The resource the operation belongs to: exactly one tag, declared with its description in tags.ts. */
  tags: readonly [ApiTag];
  /** What a caller needs beyond the summary: rules, side effects, the errors worth knowing. */
  description: string;
  /**
   * 'key' (default): Bearer API key; 'public': no auth (health, docs, verification, run opens);
   * 'runToken': Bearer run token of the Player API (checked by the route itself).
   */
  auth?: 'key' | 'public' | 'runToken';
  body?: B;
  query?: Q;
  /**
   * Raw (non-JSON) request body, documented and its Content-Type enforced here (415 otherwise, the rest of the
   * body discarded so the client reads the answer); the route reads the bytes itself. `alsoAccept`: other
   * spellings of the same type; `what`: how the 415 names the body ("the file").
   */
  rawBody?: { contentType: string; alsoAccept?: string[]; what: string; description: string };
  /** JSON body limit in bytes (inflated). Default 1 MiB. */
  bodyLimit?: number;
  responses: Record<number, ResponseSpec>;
}

export type RouteState<B, Q> = {
  auth: AuthState;
  body: B extends z.ZodType ? z.infer<B> : undefined;
  query: Q extends z.ZodType ? z.infer<Q> : undefined;
  requestId: string;
};

export type RouteHandler<B, Q> = (ctx: Context & { state: RouteState<B, Q> }) => Promise<void> | void;

const DEFAULT_JSON_LIMIT = 1024 * 1024;

/**
 * Content types a JSON body may arrive under besides JSON itself: none at all, `text/plain` (what `fetch` sends
 * for a string body) and the form type (what `curl -d` sends). Such a body is read as JSON; anything else that
 * clearly names another format (text/csv, multipart/form-data, application/xml, …) stays a 415.
 */
const LENIENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded'];

export interface ApiRouterOptions {
  /**
   * `strict`: a body must be labelled JSON (`application/json` or `+json`), anything else is a 415. The Player API
   * is strict (docs/player-api.md): its own clients (the player, SCORM packages' tracking) always label their
   * bodies, and a mislabelled body there is a client bug to surface, not a convenience to offer.
   * `lenient` (default, /api/v1): also the types of LENIENT_TYPES, for `curl -d` and `fetch` with a string body.
   */
  json?: 'strict' | 'lenient';
}

function rawBodyType(raw: NonNullable<RouteSpec<undefined, undefined>['rawBody']>): Middleware {
  const accepted = [raw.contentType, ...(raw.alsoAccept ?? [])];
  return async (ctx, next) => {
    if (!accepted.includes(ctx.request.type)) {
      ctx.req.resume();
      const got = ctx.get('content-type');
      throw new AppError(
        'unsupported_media_type',
        `Send ${raw.what} as the raw body with Content-Type: ${raw.contentType}${got ? ` (got ${got})` : ''}`,
      );
    }
    await next();
  };
}

function jsonBody(limit: number, strict: boolean): Middleware {
  const parser = koaBody({
    json: true,
    text: false,
    urlencoded: false,
    multipart: false,
    jsonStrict: true,
    jsonLimit: limit,
    encoding: 'utf-8',
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async (ctx: Context, next: Next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (!hasBody || ctx.is('application/json', '+json')) return parser(ctx, next);
    const declared = ctx.get('content-type');
    if (strict || (declared !== '' && !ctx.is(LENIENT_TYPES))) {
      ctx.req.resume();
      throw new AppError(
        'unsupported_media_type',
        'Send the body as JSON with Content-Type: application/json',
      );
    }
    // koa-body parses only what is labelled JSON; relabel so the same limit and strict parsing apply.
    ctx.request.headers['content-type'] = 'application/json';
    let parsed = false;
    try {
      await parser(ctx, async () => {
        parsed = true;
        await next();
      });
    } catch (err) {
      // A form that is not JSON is a form: say which format we take rather than "malformed JSON".
      const status = (err as { status?: number }).status;
      if (!parsed && status === 400 && /x-www-form-urlencoded/i.test(declared)) {
        throw new AppError(
          'unsupported_media_type',
          'Send the body as JSON with Content-Type: application/json',
        );
      }
      throw err;
    }
  };
}

/** NUL, lone surrogates and over-deep nesting, anywhere in the request's values (libs/errors input rules). */
function assertCleanInput(where: string, value: unknown, prefix: (string | number)[]): void {
  const issue = inputIssue(value, prefix);
  if (issue) throw new AppError('invalid_request', `${where} is invalid`, { issues: [issue] });
}

/** Router that records every route's contract; mount with `.routes()`, document with `.specs`. */
export class ApiRouter {
  readonly router: Router;
  readonly specs: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>[] = [];
  /** Full route templates (prefix included) registered through route(): the only values metrics label with. */
  readonly templates = new Set<string>();

  constructor(
    readonly prefix: string,
    private readonly options: ApiRouterOptions = {},
  ) {
    this.router = new Router({ prefix });
  }

  route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    spec: RouteSpec<B, Q>,
    ...chain: [...Middleware[], RouteHandler<B, Q>]
  ): void {
    this.specs.push(spec as RouteSpec<z.ZodType | undefined, z.ZodType | undefined>);
    this.templates.add(this.prefix + spec.path);
    const handler = chain.pop() as RouteHandler<B, Q>;
    const middlewares = chain as Middleware[];
    const validate: Middleware = async (ctx, next) => {
      assertCleanInput('A path parameter', ctx.params ?? {}, ['params']);
      assertCleanInput('A query parameter', ctx.query, ['query']);
      if (spec.body) {
        const raw = (ctx.request as { body?: unknown }).body;
        assertCleanInput('Request body', raw, []);
      }
      if (spec.query) {
        const r = (spec.query as z.ZodType).safeParse(ctx.query);
        if (!r.success)
          throw new AppError('invalid_request', 'Query parameters are invalid', {
            issues: issuesFromZod(r.error.issues, ['query']),
          });
        ctx.state.query = r.data;
      }
      if (spec.body) {
        const raw = (ctx.request as { body?: unknown }).body;
        const r = (spec.body as z.ZodType).safeParse(raw === undefined ? {} : raw);
        if (!r.success)
          throw new AppError('invalid_request', 'Request body is invalid', {
            issues: issuesFromZod(r.error.issues),
          });
        ctx.state.body = r.data;
      }
      await next();
    };
    const parse: Middleware[] = spec.body
      ? [jsonBody(spec.bodyLimit ?? DEFAULT_JSON_LIMIT, this.options.json === 'strict')]
      : spec.rawBody
        ? [rawBodyType(spec.rawBody)]
        : [];
    this.router.register(
      spec.path,
      [spec.method.toUpperCase()],
      [...middlewares, ...parse, validate, handler as unknown as Middleware],
    );
  }

  /**
   * The template of the route that serves `method path`, when one was registered through route(). For requests
   * ended before their route ran (a 401 or 429 from router-level middleware, which @koa/router reports as the
   * middleware's own path in ctx._matchedRoute).
   */
  templateOf(path: string, method: string): string | undefined {
    const layers = this.router.match(path, method).pathAndMethod;
    for (let i = layers.length - 1; i >= 0; i--) {
      const p = layers[i].path;
      if (layers[i].methods.length > 0 && typeof p === 'string' && this.templates.has(p)) return p;
    }
    return undefined;
  }

  routes(): Middleware {
    return this.router.routes() as unknown as Middleware;
  }

  allowedMethods(): Middleware {
    return this.router.allowedMethods() as unknown as Middleware;
  }
}
