import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Every response a test receives from our API is checked against the OpenAPI document the same server publishes
 * (`/api/v1/openapi.json`), so the document cannot drift from what the service answers: a field added, renamed or
 * mistyped in a handler without its schema fails the test that made the call.
 *
 * The rule: a documented status is validated against its documented schema; a 2xx that the operation does not
 * document fails; any other error status must still be the error envelope (`{error, message, issues?}`). Paths the
 * document does not describe (unknown routes, /metrics) get the envelope check on errors only.
 */

interface OpenApiDoc {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: object }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
}

interface Operation {
  pattern: RegExp;
  template: string;
  responses: OpenApiDoc['paths'][string][string]['responses'];
}

interface Contract {
  prefix: string;
  ops: Map<string, Operation[]>;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
  components: Record<string, unknown>;
}

const ERROR_ENVELOPE = {
  type: 'object',
  required: ['error', 'message'],
  properties: {
    error: { type: 'string', minLength: 1 },
    message: { type: 'string' },
    issues: {
      type: 'array',
      items: {
        type: 'object',
        required: ['code', 'path', 'message'],
        properties: {
          code: { type: 'string' },
          path: { type: 'array', items: { type: ['string', 'number'] } },
          message: { type: 'string' },
        },
      },
    },
  },
};

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const contracts = new Map<string, Promise<Contract | null>>();

async function load(origin: string): Promise<Contract | null> {
  let doc: OpenApiDoc;
  try {
    const res = await fetch(`${origin}/api/v1/openapi.json`);
    if (res.status !== 200) return null;
    doc = (await res.json()) as OpenApiDoc;
  } catch {
    return null; // not our API (a webhook receiver, a proxy that is down): nothing to check against
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const ops = new Map<string, Operation[]>();
  for (const [template, methods] of Object.entries(doc.paths)) {
    const pattern = new RegExp(
      `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
    );
    for (const [method, op] of Object.entries(methods)) {
      const list = ops.get(method.toUpperCase()) ?? [];
      list.push({ pattern, template, responses: op.responses });
      ops.set(method.toUpperCase(), list);
    }
  }
  return { prefix: '', ops, validators: new Map(), ajv, components: doc.components?.schemas ?? {} };
}

function find(contract: Contract, method: string, pathname: string): Operation | undefined {
  const list = contract.ops.get(method === 'HEAD' ? 'GET' : method) ?? [];
  // A literal segment beats a parameter (`/courses/import/csv` over `/courses/{id}/…`): prefer fewer parameters.
  return list
    .filter((o) => o.pattern.test(pathname))
    .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
}

function validator(contract: Contract, key: string, schema: object): ValidateFunction {
  let v = contract.validators.get(key);
  if (!v) {
    // Component refs are `#/components/schemas/X`: carry the components inside the compiled root.
    v = contract.ajv.compile({ ...schema, components: { schemas: contract.components } });
    contract.validators.set(key, v);
  }
  return v;
}

/** Throws when `body` is not what the OpenAPI document promises for this call. */
export async function checkContract(
  url: string,
  method: string,
  status: number,
  contentType: string | null,
  body: unknown,
): Promise<void> {
  if (process.env.TEST_SKIP_CONTRACT === '1') return;
  const u = new URL(url);
  let pending = contracts.get(u.origin);
  if (!pending) {
    pending = load(u.origin);
    contracts.set(u.origin, pending);
  }
  const contract = await pending;
  if (!contract) return;
  const isJson = (contentType ?? '').includes('json');
  const op = find(contract, method.toUpperCase(), u.pathname);
  const where = `${method.toUpperCase()} ${u.pathname} → ${status}`;
  const documented = op?.responses[String(status)];
  if (op && !documented && status < 400 && status !== 304) {
    throw new Error(
      `contract: ${where} is not documented for ${op.template} (documented: ${Object.keys(op.responses).join(', ')})`,
    );
  }
  const schema = documented?.content?.['application/json']?.schema;
  if (documented && status !== 204 && !schema) return; // a documented non-JSON body (zip, PDF, HTML, text)
  // A status documented in several media types (a PDF or its JSON record): a documented non-JSON answer.
  const mediaType = (contentType ?? '').split(';')[0].trim();
  if (!isJson && mediaType !== '' && documented?.content?.[mediaType]) return;
  if (!schema && !(status >= 400 && isJson)) return;
  if (status === 204 || method.toUpperCase() === 'HEAD') return;
  const v = schema
    ? validator(contract, `${op!.template} ${method} ${status}`, schema)
    : validator(contract, 'error-envelope', ERROR_ENVELOPE);
  if (!v(body)) {
    const errors = (v.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
      .join('; ');
    throw new Error(
      `contract: ${where} does not match the OpenAPI document${op ? ` (${op.template})` : ''}: ${errors}`,
    );
  }
}
