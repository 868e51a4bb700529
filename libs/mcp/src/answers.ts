import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { OperationAnswer } from './caller.js';
import type { Operation } from './catalogue.js';

/** Where a binary answer (a SCORM zip, a certificate PDF) goes instead of the model's context. */
export interface BinaryStore {
  /** Keeps the bytes for a short while and returns a link to them. */
  save(
    bytes: Uint8Array,
    meta: { contentType: string; filename: string },
  ): Promise<{ url: string; expiresAt: string }>;
}

/** Items of an answer's `data` list shown at most, and the JSON budget they share. */
export const MAX_LIST_ITEMS = 25;
const LIST_BUDGET_CHARS = 16_000;
/**
 * Characters of JSON an answer carries inline at most (it is sent twice: structured and as text). A larger one (the
 * OpenAPI document itself, a very long course) is handed out like a binary answer, as a link.
 */
export const MAX_INLINE_CHARS = 200_000;
/** The `limit` sent to a paged list when the caller gave none (the REST default is 50). */
export const DEFAULT_PAGE_LIMIT = 20;

const record = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)
    ? (v as Record<string, unknown>)
    : undefined;

function filenameOf(headers: Record<string, string>, op: Operation, contentType: string): string {
  const named = /filename="?([^";]+)"?/i.exec(headers['content-disposition'] ?? '')?.[1];
  if (named) return named;
  const ext = contentType.includes('zip') ? 'zip' : contentType.includes('pdf') ? 'pdf' : 'bin';
  return `${op.operationId}.${ext}`;
}

/**
 * A list answer cut to what fits a model's context: at most MAX_LIST_ITEMS items within LIST_BUDGET_CHARS, with a
 * note saying how to get the rest (the next `offset` of a paged list; one item by id for an unpaged one).
 */
function truncateList(
  body: Record<string, unknown>,
  op: Operation,
  input: { query?: Record<string, unknown> },
) {
  const data = body.data as unknown[];
  let kept = 0;
  let size = 0;
  while (kept < data.length && kept < MAX_LIST_ITEMS) {
    size += JSON.stringify(data[kept]).length;
    if (size > LIST_BUDGET_CHARS && kept > 0) break;
    kept++;
  }
  if (kept === data.length) return { body, note: undefined };
  const offset = Number(input.query?.offset ?? 0) || 0;
  const note = op.paged
    ? `Showing ${kept} of the ${data.length} items of this page. Call ${op.operationId} again with query.offset=${offset + kept} and a smaller query.limit for the rest.`
    : `Showing ${kept} of ${data.length} items (this list is not paged). Read one item by its id for the rest.`;
  return {
    body: { ...body, data: data.slice(0, kept), truncated: { shown: kept, total: data.length, note } },
    note,
  };
}

function pagingNote(body: Record<string, unknown>, op: Operation): string | undefined {
  const p = record(body.pagination);
  if (!op.paged || !p || p.hasMore !== true) return undefined;
  const next = Number(p.offset ?? 0) + Number(p.limit ?? 0);
  return `More rows exist (total ${String(p.total)}): call ${op.operationId} with query.offset=${next} for the next page.`;
}

export function errorResult(
  status: number,
  body: { error: string; message: string; issues?: unknown },
): CallToolResult {
  const issues = Array.isArray(body.issues) ? `\n${JSON.stringify(body.issues)}` : '';
  return {
    isError: true,
    structuredContent: { status, body },
    content: [{ type: 'text', text: `HTTP ${status} ${body.error}: ${body.message}${issues}` }],
  };
}

/** An error answer (4xx/5xx) as a tool error carrying the API's own `error`, `message` and `issues`; else undefined. */
export function refusal(answer: OperationAnswer): CallToolResult | undefined {
  if (answer.status < 400) return undefined;
  const b = record(answer.body);
  const error = typeof b?.error === 'string' ? b.error : `http_${answer.status}`;
  const message = typeof b?.message === 'string' ? b.message : `HTTP ${answer.status}`;
  return errorResult(answer.status, { error, message, ...(b?.issues ? { issues: b.issues } : {}) });
}

/**
 * An operation's answer as a tool result: `structuredContent` `{status, body}` plus a text rendering. An error answer
 * is a tool error carrying the API's own `error`, `message` and `issues`; bytes become a short-lived link.
 */
export async function toToolResult(
  op: Operation,
  input: { query?: Record<string, unknown> },
  answer: OperationAnswer,
  binary: BinaryStore,
): Promise<CallToolResult> {
  let body = answer.body;
  const notes: string[] = [];
  const refused = refusal(answer);
  if (refused) return refused;
  const asLink = async (bytes: Uint8Array, contentType: string, filename: string) => {
    const link = await binary.save(bytes, { contentType, filename });
    notes.push(
      `The ${contentType} answer (${bytes.length} bytes) is at the link above until ${link.expiresAt}; it is not shown inline.`,
    );
    return { data: { ...link, contentType, filename, bytes: bytes.length } };
  };
  if (body instanceof Uint8Array) {
    const contentType = answer.headers['content-type'] ?? 'application/octet-stream';
    body = await asLink(body, contentType, filenameOf(answer.headers, op, contentType));
  } else {
    const b = record(body);
    if (b && Array.isArray(b.data)) {
      const cut = truncateList(b, op, input);
      body = cut.body;
      if (cut.note) notes.push(cut.note);
      const more = pagingNote(b, op);
      if (more) notes.push(more);
    }
    const json = JSON.stringify(body) ?? '';
    if (json.length > MAX_INLINE_CHARS)
      body = await asLink(Buffer.from(json), 'application/json', `${op.operationId}.json`);
  }
  const text = [`HTTP ${answer.status}`, body === null ? '(no body)' : JSON.stringify(body), ...notes].join(
    '\n',
  );
  return { structuredContent: { status: answer.status, body }, content: [{ type: 'text', text }] };
}
