import { randomBytes } from 'node:crypto';
/** As in catalogue.ts (which builds its input schemas with this module). */
type JsonSchema = Record<string, unknown>;
/** What of an operation decides how its body is sent. */
type Operation = { body?: { contentType: string; json: boolean } };

/**
 * Request bodies that are not JSON, as a tool sends them (docs/mcp.md "Files in requests"): a model cannot put raw
 * bytes in a JSON-RPC message, so a binary body travels as `{base64, contentType?}` — a SCORM zip for
 * `importScormPackage` — and a multipart form as its fields with each file part `{base64, filename?}`
 * (`uploadMedia`: `{file: {base64, filename}, kind}`). Decoded here into the exact bytes and content type the REST
 * call takes, so the operation itself checks them as it checks any upload.
 */

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const FILE_NAME = /^[^\x00-\x1f"\\/]{1,200}$/;

export class BinaryBodyError extends Error {
  constructor(
    message: string,
    readonly path: (string | number)[],
  ) {
    super(message);
    this.name = 'BinaryBodyError';
  }
}

export const isMultipart = (op: Operation) => op.body?.contentType.startsWith('multipart/form-data') === true;
const isText = (type: string) => /^text\//i.test(type);

const base64Schema: JsonSchema = {
  type: 'string',
  contentEncoding: 'base64',
  description: 'The bytes, base64-encoded',
};

/** The tool input schema of a body that is not JSON (see above); `multipart` is the form's own OpenAPI schema. */
export function binaryBodySchema(contentType: string, multipart?: JsonSchema): JsonSchema {
  const file = (what: string): JsonSchema => ({
    type: 'object',
    description: what,
    properties: { base64: base64Schema, filename: { type: 'string', maxLength: 200 } },
    required: ['base64'],
    additionalProperties: false,
  });
  if (contentType.startsWith('multipart/form-data')) {
    const props = (multipart?.properties ?? {}) as Record<string, JsonSchema>;
    return {
      type: 'object',
      description: 'The form: each file part as {base64, filename?}, other fields as their values',
      properties: Object.fromEntries(
        Object.entries(props).map(([k, s]) => [
          k,
          s.format === 'binary' ? file(String(s.description ?? 'A file part')) : s,
        ]),
      ),
      ...(Array.isArray(multipart?.required) ? { required: multipart.required } : {}),
      additionalProperties: false,
    };
  }
  const bytes: JsonSchema = {
    type: 'object',
    description: `The ${contentType} body as bytes`,
    properties: { base64: base64Schema },
    required: ['base64'],
    additionalProperties: false,
  };
  return isText(contentType)
    ? { anyOf: [{ type: 'string', description: `The raw ${contentType} body, as text` }, bytes] }
    : bytes;
}

function decode(value: unknown, path: (string | number)[]): Buffer {
  const b64 = (value as { base64?: unknown } | null)?.base64;
  if (typeof b64 !== 'string')
    throw new BinaryBodyError('expected {base64}: the bytes, base64-encoded', path);
  const compact = b64.replace(/\s+/g, '');
  if (compact.length % 4 === 1 || !BASE64.test(compact))
    throw new BinaryBodyError('not base64 (A–Z, a–z, 0–9, +, / and = padding)', [...path, 'base64']);
  return Buffer.from(compact, 'base64');
}

const quote = (s: string) => s.replace(/["\\\r\n]/g, '_');

/**
 * The body and content type to send for `op` given the tool's `body`, or null when it goes as it is (JSON, text).
 * Throws BinaryBodyError (with the input path) on a malformed value.
 */
export function encodeBinaryBody(
  op: Operation,
  body: unknown,
): { body: Uint8Array; contentType: string } | null {
  if (!op.body || op.body.json || body === undefined || typeof body === 'string') return null;
  if (!isMultipart(op)) return { body: decode(body, ['body']), contentType: op.body.contentType };
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new BinaryBodyError('expected the form as an object of its fields', ['body']);
  const boundary = `lectern-${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (!/^[\w.-]{1,100}$/.test(name)) throw new BinaryBodyError('not a form field name', ['body', name]);
    if (value !== null && typeof value === 'object') {
      const bytes = decode(value, ['body', name]);
      const filename = (value as { filename?: unknown }).filename ?? 'upload';
      if (typeof filename !== 'string' || !FILE_NAME.test(filename))
        throw new BinaryBodyError('a file name without quotes, slashes or control characters', [
          'body',
          name,
          'filename',
        ]);
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${quote(filename)}"\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        ),
        bytes,
        Buffer.from('\r\n'),
      );
    } else if (value !== undefined) {
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${String(value)}\r\n`,
        ),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
