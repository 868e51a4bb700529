import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DEFAULT_PAGE_LIMIT, errorResult, refusal, toToolResult, type BinaryStore } from './answers.js';
import {
  UnknownOperationError,
  type OperationAnswer,
  type OperationCaller,
  type OperationInput,
} from './caller.js';
import { searchOperations, type Catalogue } from './catalogue.js';
import { BinaryBodyError, encodeBinaryBody } from './binary-body.js';

/**
 * Toolsets a client picks from (`/mcp?toolsets=authoring,delivery`, the `X-MCP-Toolsets` header, stdio's
 * `--toolsets` or `LECTERN_MCP_TOOLSETS`). `operations` holds the two generic tools that reach every operation.
 */
export const TOOLSETS = ['operations', 'authoring', 'delivery'] as const;
export type Toolset = (typeof TOOLSETS)[number];

export class ToolsetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolsetError';
  }
}

/** `authoring,delivery` → the toolsets; empty or absent → all of them; an unknown name is refused. */
export function parseToolsets(value: string | undefined | null): Toolset[] {
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!names.length || names.includes('all')) return [...TOOLSETS];
  const unknown = names.filter((n) => !(TOOLSETS as readonly string[]).includes(n));
  if (unknown.length)
    throw new ToolsetError(
      `Unknown toolset ${unknown.join(', ')}; known toolsets: ${TOOLSETS.join(', ')}, all`,
    );
  return [...new Set(names)] as Toolset[];
}

export interface LecternMcpOptions {
  catalogue: Catalogue;
  caller: OperationCaller;
  binary: BinaryStore;
  toolsets?: Toolset[];
  /** A read-only key: only tools that read are listed (the API refuses writes anyway: insufficient_scope). */
  readOnly?: boolean;
  version?: string;
}

const SEARCH_LIMIT = 5;
/** Characters of input schemas one search answer carries (the course schema alone is ~14k). */
const SCHEMA_BUDGET = 20_000;
const POLL_MS = 2500;

const Answer = { status: z.number().int(), body: z.unknown() };

const INSTRUCTIONS = `Lectern: course authoring and delivery. Every operation of the REST API /api/v1 is reachable:
find one with search_operations (by words or an operationId), then run it with call_operation. Answers are
{status, body} exactly as the REST API gives them; errors carry the stable code in body.error.`;

/** Builds one tool server over a catalogue and a caller; stateless, so the HTTP transport builds one per request. */
export function createLecternMcpServer(opts: LecternMcpOptions): McpServer {
  const { catalogue, caller, binary } = opts;
  const toolsets = new Set(opts.toolsets ?? TOOLSETS);
  const readOnly = opts.readOnly === true;
  const server = new McpServer(
    { name: 'lectern', title: 'Lectern', version: opts.version ?? '0.1.0' },
    { instructions: INSTRUCTIONS },
  );

  /** An operation run through the caller; an unknown one, or a refusal, as the REST error shape. */
  async function run(operationId: string, input: OperationInput): Promise<OperationAnswer> {
    const op = catalogue.byId.get(operationId);
    if (!op) throw new UnknownOperationError(operationId);
    const query =
      op.paged && input.query?.limit === undefined
        ? { ...input.query, limit: DEFAULT_PAGE_LIMIT }
        : input.query;
    // A file in the body (`{base64}`, a form's file part) becomes the bytes and content type the REST call takes.
    const binaryBody = encodeBinaryBody(op, input.body);
    return caller.call(operationId, {
      ...input,
      query,
      ...(binaryBody
        ? { body: binaryBody.body, headers: { ...input.headers, 'content-type': binaryBody.contentType } }
        : {}),
    });
  }
  const unknownOperation = (operationId: string) =>
    errorResult(404, {
      error: 'not_found',
      message: `unknown operation: ${operationId}. Find operations with search_operations.`,
    });
  const done = <T extends Record<string, unknown>>(data: T, text: string): CallToolResult => ({
    structuredContent: data,
    content: [{ type: 'text', text: `${text}\n${JSON.stringify(data)}` }],
  });
  const dataOf = (a: OperationAnswer) =>
    ((a.body ?? {}) as { data?: unknown }).data as Record<string, unknown>;

  if (toolsets.has('operations')) {
    server.registerTool(
      'search_operations',
      {
        title: 'Search API operations',
        description:
          'Finds operations of the Lectern API by words ("create course", "completions") or an exact operationId. ' +
          `Returns up to ${SEARCH_LIMIT}: operationId, method, path, summary and the input JSON Schema for call_operation.`,
        inputSchema: { query: z.string().min(1).max(200) },
        outputSchema: {
          operations: z.array(
            z.object({
              operationId: z.string(),
              method: z.string(),
              path: z.string(),
              summary: z.string(),
              inputSchema: z.record(z.string(), z.unknown()),
            }),
          ),
        },
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      },
      ({ query }) => {
        const found = searchOperations(
          { ...catalogue, operations: catalogue.operations.filter((o) => !readOnly || o.method === 'GET') },
          query,
          SEARCH_LIMIT,
        );
        // The first match always carries its schema; later ones while the schemas stay within SCHEMA_BUDGET, so a
        // search never floods the context with two copies of the course schema.
        let spent = 0;
        const operations = found.map((o, i) => {
          const size = JSON.stringify(o.inputSchema).length;
          const fits = i === 0 || spent + size <= SCHEMA_BUDGET;
          if (fits) spent += size;
          return {
            operationId: o.operationId,
            method: o.method,
            path: o.path,
            summary: o.summary,
            inputSchema: fits
              ? o.inputSchema
              : { description: `Omitted for size: search_operations "${o.operationId}" gives this schema.` },
          };
        });
        const lines = found.map((o) => `${o.operationId}: ${o.method} ${o.path} — ${o.summary}`);
        return {
          structuredContent: { operations },
          content: [
            {
              type: 'text',
              text: operations.length
                ? `${lines.join('\n')}\n${JSON.stringify(operations)}`
                : `No operation matches "${query}". Try other words (a resource: course, identity, completion, webhook…).`,
            },
          ],
        };
      },
    );

    server.registerTool(
      'call_operation',
      {
        title: 'Call an API operation',
        description:
          'Runs one Lectern API operation by operationId, with path `params`, `query` and JSON `body` as its input ' +
          'schema (search_operations) says; a file goes in `body` as {base64} (a SCORM zip) or, in a form, as a ' +
          'field {base64, filename} (uploadMedia: {file: {base64, filename}, kind}). ' +
          'Returns {status, body} as the REST API answers; an error answer is a tool ' +
          'error carrying body.error (stable code), body.message and body.issues. Binary answers come back as a ' +
          `short-lived link; long lists are cut with a note; paged lists default to limit ${DEFAULT_PAGE_LIMIT}.` +
          (readOnly ? ' This key is read-only: only GET operations succeed.' : ''),
        inputSchema: {
          operationId: z.string().min(1).max(100),
          params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
          query: z.record(z.string(), z.unknown()).optional(),
          body: z.unknown().optional(),
        },
        outputSchema: Answer,
        annotations: {
          readOnlyHint: readOnly,
          destructiveHint: !readOnly,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      async ({ operationId, params, query, body }) => {
        const op = catalogue.byId.get(operationId);
        if (!op) return unknownOperation(operationId);
        const input = { params, query, body };
        let answer: OperationAnswer;
        try {
          answer = await run(operationId, input);
        } catch (err) {
          // A malformed file value is refused as the API refuses a malformed body: 400 with the input path.
          if (!(err instanceof BinaryBodyError)) throw err;
          return errorResult(400, {
            error: 'invalid_request',
            message: `Invalid request body: ${err.message}`,
            issues: [{ path: err.path, message: err.message }],
          });
        }
        return toToolResult(op, { query: input.query }, answer, binary);
      },
    );
  }

  if (toolsets.has('authoring') && !readOnly) {
    const Point = z.string().min(1).max(2000);
    server.registerTool(
      'draft_course_from_outline',
      {
        title: 'Draft a course from an outline',
        description:
          'Creates a draft course (createCourse) with one screen per outline section: a heading, its points as ' +
          'text, and an optional single-choice question. Edit it further with call_operation updateCourse.',
        inputSchema: {
          title: z.string().min(1).max(200),
          sections: z
            .array(
              z.object({
                title: z.string().min(1).max(200),
                points: z.array(Point).max(20).optional(),
                question: z
                  .object({
                    text: z.string().min(1).max(500),
                    options: z.array(z.string().min(1).max(200)).min(2).max(6),
                    correctIndex: z.number().int().min(0).max(5),
                  })
                  .optional(),
              }),
            )
            .min(1)
            .max(30),
          passingScore: z.number().min(0).max(100).optional(),
        },
        outputSchema: {
          courseId: z.string(),
          title: z.string(),
          status: z.string(),
          screens: z.number().int(),
        },
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
      },
      async ({ title, sections, passingScore }) => {
        const screens = sections.map((s, i) => {
          const id = `s${i + 1}`;
          const blocks: Record<string, unknown>[] = [{ id: `${id}-h`, type: 'heading', text: s.title }];
          (s.points ?? []).forEach((p, j) => blocks.push({ id: `${id}-t${j + 1}`, type: 'text', text: p }));
          if (s.question) {
            const q = s.question;
            blocks.push({
              id: `${id}-q`,
              type: 'quiz_single_choice',
              question: q.text,
              options: q.options.map((text, j) => ({ id: `o${j + 1}`, text, correct: j === q.correctIndex })),
            });
          }
          return { id, title: s.title, blocks };
        });
        const answer = await run('createCourse', {
          body: { title, screens, ...(passingScore === undefined ? {} : { passingScore }) },
        });
        const refused = refusal(answer);
        if (refused) return refused;
        const course = dataOf(answer);
        return done(
          {
            courseId: String(course.id),
            title: String(course.title),
            status: String(course.status),
            screens: screens.length,
          },
          `Drafted course ${String(course.id)}.`,
        );
      },
    );

    server.registerTool(
      'publish_course',
      {
        title: 'Publish a course',
        description:
          'Publishes a draft course (updateCourse with status published), so its embed goes live and course.published ' +
          'fires. Publishing a published course changes nothing.',
        inputSchema: { courseId: z.string().min(1).max(100) },
        outputSchema: { courseId: z.string(), status: z.string() },
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      async ({ courseId }) => {
        const answer = await run('updateCourse', { params: { id: courseId }, body: { status: 'published' } });
        const refused = refusal(answer);
        if (refused) return refused;
        const course = dataOf(answer);
        return done(
          { courseId: String(course.id), status: String(course.status) },
          `Course ${courseId} is published.`,
        );
      },
    );

    // Registered only when the service has the generation routes, so a service without them lists no dead tool.
    if (catalogue.byId.has('createGenerationJob') && catalogue.byId.has('getGenerationJob')) {
      server.registerTool(
        'generate_course_and_wait',
        {
          title: 'Generate a course and wait',
          description:
            'Starts an AI generation job (createGenerationJob) and polls it (getGenerationJob) until it completes or ' +
            'fails, or up to waitSeconds; the result is a draft course id. Uses one generation of the monthly allowance.',
          inputSchema: {
            prompt: z.string().min(1).max(2000),
            audience: z.string().max(500).optional(),
            screensTarget: z.number().int().min(1).max(20).optional(),
            locale: z.string().max(35).optional(),
            waitSeconds: z.number().int().min(0).max(120).optional(),
          },
          outputSchema: {
            jobId: z.string(),
            status: z.string(),
            courseId: z.string().nullable(),
            error: z.string().nullable(),
          },
          annotations: {
            readOnlyHint: false,
            destructiveHint: false,
            idempotentHint: false,
            openWorldHint: true,
          },
        },
        async ({ waitSeconds, ...body }, extra) => {
          const started = await run('createGenerationJob', { body });
          const refused = refusal(started);
          if (refused) return refused;
          let job = dataOf(started);
          const jobId = String(job.id);
          const deadline = Date.now() + (waitSeconds ?? 60) * 1000;
          while (!['completed', 'failed'].includes(String(job.status)) && Date.now() < deadline) {
            if (extra.signal.aborted) break;
            await new Promise((r) => setTimeout(r, POLL_MS));
            const polled = await run('getGenerationJob', { params: { id: jobId } });
            const lost = refusal(polled);
            if (lost) return lost;
            job = dataOf(polled);
          }
          const status = String(job.status);
          const out = {
            jobId,
            status,
            courseId: typeof job.courseId === 'string' ? job.courseId : null,
            error: typeof job.error === 'string' ? job.error : null,
          };
          const text =
            status === 'completed' || status === 'failed'
              ? `Generation ${jobId} ${status}.`
              : `Generation ${jobId} is still ${status}; poll it with call_operation getGenerationJob.`;
          return done(out, text);
        },
      );
    }
  }

  if (toolsets.has('delivery')) {
    server.registerTool(
      'course_progress',
      {
        title: 'Learner progress for a course',
        description:
          "Summarises learners' runs of one course (listCompletions): how many started and finished, average score, " +
          'passes, and the most recent runs. Read-only.',
        inputSchema: {
          courseId: z.string().min(1).max(100),
          status: z.enum(['in_progress', 'completed']).optional(),
          limit: z.number().int().min(1).max(100).optional(),
        },
        outputSchema: {
          courseId: z.string(),
          total: z.number().int(),
          shown: z.number().int(),
          completed: z.number().int(),
          inProgress: z.number().int(),
          passed: z.number().int(),
          averageScore: z.number().nullable(),
          runs: z.array(
            z.object({
              completionId: z.string(),
              learner: z.string(),
              status: z.string(),
              progressPercent: z.number(),
              score: z.number().nullable(),
              passed: z.boolean().nullable(),
            }),
          ),
          note: z.string().optional(),
        },
        annotations: {
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      async ({ courseId, status, limit }) => {
        const answer = await run('listCompletions', {
          query: { courseId, ...(status ? { status } : {}), limit: limit ?? DEFAULT_PAGE_LIMIT },
        });
        const refused = refusal(answer);
        if (refused) return refused;
        const body = answer.body as {
          data: {
            id: string;
            identityExternalId: string;
            status: string;
            progressPercent: number;
            score: number | null;
            passed: boolean | null;
          }[];
          pagination: { total: number; hasMore: boolean; offset: number; limit: number };
        };
        const runs = body.data.map((c) => ({
          completionId: c.id,
          learner: c.identityExternalId,
          status: c.status,
          progressPercent: c.progressPercent,
          score: c.score,
          passed: c.passed,
        }));
        const scores = runs.map((r) => r.score).filter((s): s is number => typeof s === 'number');
        const out = {
          courseId,
          total: body.pagination.total,
          shown: runs.length,
          completed: runs.filter((r) => r.status === 'completed').length,
          inProgress: runs.filter((r) => r.status === 'in_progress').length,
          passed: runs.filter((r) => r.passed === true).length,
          averageScore: scores.length
            ? Math.round((scores.reduce((a, b) => a + b, 0) / scores.length) * 10) / 10
            : null,
          runs,
          ...(body.pagination.hasMore
            ? {
                note: `Counts cover the ${runs.length} most recent runs of ${body.pagination.total}; page through all with call_operation listCompletions (query.courseId, query.offset).`,
              }
            : {}),
        };
        return done(out, `${out.total} runs of course ${courseId}.`);
      },
    );
  }

  registerResources(server, run);
  registerPrompts(server);
  return server;
}

type Run = (operationId: string, input: OperationInput) => Promise<OperationAnswer>;

/** Resources for reading: a course and its translatable fields, addressed `lectern://courses/{courseId}[…]`. */
function registerResources(server: McpServer, run: Run): void {
  const read = async (uri: URL, operationId: string, id: string) => {
    const answer = await run(operationId, { params: { id } });
    if (answer.status >= 400) {
      const b = (answer.body ?? {}) as { error?: string; message?: string };
      throw new Error(`${b.error ?? `http_${answer.status}`}: ${b.message ?? ''}`);
    }
    return {
      contents: [
        {
          uri: uri.href,
          mimeType: 'application/json',
          text: JSON.stringify((answer.body as { data: unknown }).data),
        },
      ],
    };
  };
  server.registerResource(
    'course',
    new ResourceTemplate('lectern://courses/{courseId}', {
      list: async () => {
        const answer = await run('listCourses', {});
        const courses =
          answer.status < 400 ? ((answer.body as { data: { id: string; title: string }[] }).data ?? []) : [];
        return {
          resources: courses.slice(0, 100).map((c) => ({
            uri: `lectern://courses/${encodeURIComponent(c.id)}`,
            name: c.title,
            mimeType: 'application/json',
          })),
        };
      },
    }),
    {
      title: 'Course',
      description: 'A course with its screens and blocks (getCourse).',
      mimeType: 'application/json',
    },
    (uri, { courseId }) => read(uri, 'getCourse', String(courseId)),
  );
  server.registerResource(
    'course-translatable',
    new ResourceTemplate('lectern://courses/{courseId}/translatable', { list: undefined }),
    {
      title: 'Translatable fields of a course',
      description:
        'The source locale and every translatable field of a course (getTranslatableTexts; Scale plan).',
      mimeType: 'application/json',
    },
    (uri, { courseId }) => read(uri, 'getTranslatableTexts', String(courseId)),
  );
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    'translate_course',
    {
      title: 'Translate a course',
      description: 'Steps to add a locale to a course and fill every translatable field.',
      argsSchema: { courseId: z.string(), locale: z.string() },
    },
    ({ courseId, locale }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Translate Lectern course ${courseId} into ${locale}. Read the resource lectern://courses/${courseId}/translatable ` +
              `(or call_operation getTranslatableTexts). Create the locale with call_operation createTranslation ` +
              `{params:{id:"${courseId}"}, body:{locale:"${locale}"}}, then send every field's translation with ` +
              `updateTranslation, body {content: {<path>: <translated text>}}. Keep placeholders like {{blank}} as they are.`,
          },
        },
      ],
    }),
  );
  server.registerPrompt(
    'course_report',
    {
      title: 'Report on a course',
      description: "A short report on learners' progress and results for one course.",
      argsSchema: { courseId: z.string() },
    },
    ({ courseId }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Write a short report on Lectern course ${courseId}: read it (lectern://courses/${courseId}), then use the ` +
              'course_progress tool for runs, completions, passes and the average score. Name what stands out.',
          },
        },
      ],
    }),
  );
}
