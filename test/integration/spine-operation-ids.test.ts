import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { z } from 'zod';
import { buildApp, OPERATION_VERBS } from '@lectern/api';
import { NO_RELAY } from '@lectern/events';
import { call } from '../support/http.js';
import { REPO_ROOT, startCustomApp, type CustomApp } from '../support/spine.js';

/**
 * operationIds are a public contract (docs/authoring.md, "Operation names"): the typed client's methods and the
 * tool server's tools are named after them. These checks run on the document the server publishes.
 */

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
}
interface OpenApiDoc {
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
}

const CAMEL_CASE = /^[a-z]+(?:[A-Z][a-z0-9]*)+$/;

/**
 * The forms an id made from the method and path takes, with and without the version prefix:
 * `get_api_v1_courses_id`, `getApiV1CoursesId`, `getCoursesId`. A path of one plain segment (`/metrics`) is left
 * out: there verb + path is also the human name.
 */
function pathMade(method: string, template: string): string[] {
  const words = template.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const bare = words.filter((w) => w !== 'api' && !/^v\d+$/.test(w));
  if (bare.length === 1 && !template.includes('{')) return [];
  const camel = (ws: string[]) =>
    [method, ...ws].map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join('');
  return [[method, ...words].join('_'), camel(words), camel(bare)].map((f) => f.toLowerCase());
}

/** Every way an operationId of the document breaks the contract, one line each ("METHOD /path: why"). */
function operationIdProblems(doc: OpenApiDoc): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const [template, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const where = `${method.toUpperCase()} ${template}`;
      const id = op.operationId;
      if (typeof id !== 'string' || id === '') {
        problems.push(`${where}: no operationId`);
        continue;
      }
      const first = seen.get(id);
      if (first) problems.push(`${where}: operationId ${id} is also ${first}`);
      seen.set(id, where);
      if (!CAMEL_CASE.test(id)) problems.push(`${where}: ${id} is not camelCase`);
      const verb = /^[a-z]+/.exec(id)?.[0] ?? '';
      if (!(OPERATION_VERBS as readonly string[]).includes(verb))
        problems.push(`${where}: ${id} does not start with a verb (${OPERATION_VERBS.join(', ')})`);
      if (pathMade(method, template).includes(id.toLowerCase()) || /_|Api(?:V\d|$)|V\d+(?=[A-Z]|$)/.test(id))
        problems.push(`${where}: ${id} is made from the path`);
    }
  }
  return problems;
}

const operations = (doc: OpenApiDoc) =>
  Object.entries(doc.paths).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ where: `${method.toUpperCase()} ${template}`, op })),
  );

/**
 * The published names. Renaming one breaks every client and tool built on it: change this list only together
 * with the table in docs/authoring.md, and treat a rename like a new API version.
 */
const PUBLISHED: Record<string, string> = {
  'GET /healthz': 'getLiveness',
  'GET /readyz': 'getReadiness',
  'GET /metrics': 'getMetrics',
  'GET /api/v1/openapi.json': 'getOpenApiDocument',
  'GET /api/v1/docs': 'getApiReference',
  'GET /api/v1/docs/assets/{name}': 'getApiReferenceAsset',
  'POST /mcp': 'sendMcpMessage',
  'GET /verify/{serial}': 'verifyCertificate',
  'GET /verify/{serial}/credential.json': 'getCertificateCredential',
  'GET /verify/{serial}/credential.jwt': 'getCertificateCredentialJwt',
  'GET /issuers/{workspaceId}': 'getIssuerProfile',
  'GET /player/assets/{name}': 'getPlayerAsset',
  'GET /preview/{courseId}': 'getPreviewPage',
  'GET /api/v1/me': 'getWorkspace',
  'GET /api/v1/settings/player': 'getPlayerSettings',
  'PATCH /api/v1/settings/player': 'updatePlayerSettings',
  'GET /api/v1/usage': 'getUsage',
  'GET /api/v1/identities': 'listIdentities',
  'POST /api/v1/identities': 'upsertIdentity',
  'POST /api/v1/identities/bulk': 'upsertIdentitiesInBulk',
  'DELETE /api/v1/identities/bulk': 'deleteIdentitiesInBulk',
  'GET /api/v1/identities/{id}': 'getIdentity',
  'DELETE /api/v1/identities/{id}': 'deleteIdentity',
  'GET /api/v1/webhooks': 'listWebhookEndpoints',
  'POST /api/v1/webhooks': 'createWebhookEndpoint',
  'GET /api/v1/webhooks/{id}': 'getWebhookEndpoint',
  'PATCH /api/v1/webhooks/{id}': 'updateWebhookEndpoint',
  'DELETE /api/v1/webhooks/{id}': 'deleteWebhookEndpoint',
  'GET /api/v1/webhooks/{id}/deliveries': 'listWebhookDeliveries',
  'GET /api/v1/webhooks/{id}/deliveries/{deliveryId}': 'getWebhookDelivery',
  'POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/resend': 'resendWebhookDelivery',
  'POST /api/v1/webhooks/{id}/test': 'sendWebhookTestEvent',
  'POST /api/v1/courses/import/csv': 'importCourseFromCsv',
  'POST /api/v1/courses/import/scorm': 'importCourseFromScorm',
  'GET /api/v1/courses': 'listCourses',
  'POST /api/v1/courses': 'createCourse',
  'GET /api/v1/courses/{id}': 'getCourse',
  'PATCH /api/v1/courses/{id}': 'updateCourse',
  'DELETE /api/v1/courses/{id}': 'deleteCourse',
  'GET /api/v1/courses/{id}/scorm': 'exportCourseToScorm',
  'POST /api/v1/courses/{id}/tracking-secret/rotate': 'rotateCourseTrackingSecret',
  'POST /api/v1/courses/{id}/preview': 'createCoursePreviewLink',
  'GET /api/v1/themes': 'listThemes',
  'POST /api/v1/themes': 'createTheme',
  'GET /api/v1/themes/{id}': 'getTheme',
  'PATCH /api/v1/themes/{id}': 'updateTheme',
  'DELETE /api/v1/themes/{id}': 'deleteTheme',
  'GET /api/v1/certificates': 'listCertificateTemplates',
  'POST /api/v1/certificates': 'createCertificateTemplate',
  'GET /api/v1/certificates/{id}': 'getCertificateTemplate',
  'PATCH /api/v1/certificates/{id}': 'updateCertificateTemplate',
  'DELETE /api/v1/certificates/{id}': 'deleteCertificateTemplate',
  'GET /api/v1/collections': 'listCollections',
  'POST /api/v1/collections': 'createCollection',
  'GET /api/v1/collections/{id}': 'getCollection',
  'PATCH /api/v1/collections/{id}': 'updateCollection',
  'DELETE /api/v1/collections/{id}': 'deleteCollection',
  'POST /api/v1/collections/{id}/courses': 'addCourseToCollection',
  'PATCH /api/v1/collections/{id}/courses/{courseId}': 'moveCourseInCollection',
  'DELETE /api/v1/collections/{id}/courses/{courseId}': 'removeCourseFromCollection',
  'GET /api/v1/courses/{id}/translatable': 'getTranslatableTexts',
  'GET /api/v1/courses/{id}/translations': 'listTranslations',
  'POST /api/v1/courses/{id}/translations': 'createTranslation',
  'GET /api/v1/courses/{id}/translations/{translationId}': 'getTranslation',
  'PATCH /api/v1/courses/{id}/translations/{translationId}': 'updateTranslation',
  'DELETE /api/v1/courses/{id}/translations/{translationId}': 'deleteTranslation',
  'GET /api/v1/completions': 'listCompletions',
  'GET /api/v1/completions/{id}': 'getCompletion',
  'GET /api/v1/completions/{id}/attempts': 'listCompletionAttempts',
  'GET /api/v1/completions/{id}/certificate': 'getCompletionCertificate',
  'POST /api/v1/embed-keys': 'createEmbedKey',
  'GET /api/v1/embed-keys': 'listEmbedKeys',
  'DELETE /api/v1/embed-keys/{id}': 'deleteEmbedKey',
  'GET /api/v1/issued-certificates': 'listIssuedCertificates',
  'GET /api/v1/issued-certificates/{serial}': 'getIssuedCertificate',
  'GET /api/v1/issued-certificates/{serial}/pdf': 'getIssuedCertificatePdf',
  'POST /api/v1/media': 'uploadMedia',
  'GET /api/v1/media': 'listMedia',
  'GET /api/v1/media/{id}': 'getMedia',
  'DELETE /api/v1/media/{id}': 'deleteMedia',
  'GET /embed/{courseId}': 'getEmbedPage',
  'POST /player/v1/runs': 'openRun',
  'POST /player/v1/runs/{completionId}/events': 'reportRunEvents',
  'POST /player/v1/runs/{completionId}/retake': 'retakeRun',
  'GET /player/v1/runs/{completionId}/certificate': 'getRunCertificate',
  'GET /player/v1/runs/{completionId}/polls/{blockId}': 'getRunPollResults',
  'POST /api/v1/generate': 'createGenerationJob',
  'GET /api/v1/generate/{id}': 'getGenerationJob',
};

/** Names kept for operations whose routes do not exist yet; the docs list them, the document must not. */
const RESERVED: string[] = [];

/** The "Operation names" table of docs/authoring.md: operationId → "METHOD /path" (OpenAPI path form). */
function documentedNames(): { published: Record<string, string>; reserved: string[] } {
  const md = readFileSync(path.join(REPO_ROOT, 'docs/authoring.md'), 'utf8');
  const start = md.indexOf('\n## Operation names');
  expect(start, 'docs/authoring.md has an "Operation names" section').to.be.greaterThan(-1);
  const section = md.slice(start + 1).split(/\n## /)[0];
  const published: Record<string, string> = {};
  const reserved: string[] = [];
  for (const line of section.split('\n')) {
    const row = /^\| `([A-Za-z]+)` \| `(GET|POST|PATCH|PUT|DELETE) (\S+)` \|/.exec(line);
    if (row) published[`${row[2]} ${row[3].replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`] = row[1];
    const held = /^\| `([A-Za-z]+)` \| reserved/.exec(line);
    if (held) reserved.push(held[1]);
  }
  return { published, reserved };
}

describe('spine: operationIds are named, unique and pinned', () => {
  let app: CustomApp;
  let doc: OpenApiDoc;
  before(async () => {
    app = await startCustomApp();
    const res = await call<OpenApiDoc>(app.base, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => app?.close());

  it('every operation of the published document has a unique, camelCase, verb-first name not made from its path', () => {
    expect(operations(doc).length).to.equal(Object.keys(PUBLISHED).length);
    expect(operationIdProblems(doc)).to.deep.equal([]);
  });

  it('the check reports a missing, duplicated, snake_case, noun-first or path-made operationId', () => {
    const broken: OpenApiDoc = {
      paths: {
        '/api/v1/courses': { get: { operationId: 'listCourses' }, post: {} },
        '/api/v1/themes': { get: { operationId: 'listCourses' } },
        '/api/v1/courses/{id}': {
          get: { operationId: 'get_api_v1_courses_id' },
          patch: { operationId: 'patchApiV1CoursesId' },
          delete: { operationId: 'courseDelete' },
        },
        '/api/v1/themes/{id}': {
          get: { operationId: 'getThemesId' },
          delete: { operationId: 'deleteThemeV1' },
        },
      },
    };
    expect(operationIdProblems(broken)).to.deep.equal([
      'POST /api/v1/courses: no operationId',
      'GET /api/v1/themes: operationId listCourses is also GET /api/v1/courses',
      'GET /api/v1/courses/{id}: get_api_v1_courses_id is not camelCase',
      'GET /api/v1/courses/{id}: get_api_v1_courses_id is made from the path',
      'PATCH /api/v1/courses/{id}: patchApiV1CoursesId does not start with a verb (' +
        `${OPERATION_VERBS.join(', ')})`,
      'PATCH /api/v1/courses/{id}: patchApiV1CoursesId is made from the path',
      `DELETE /api/v1/courses/{id}: courseDelete does not start with a verb (${OPERATION_VERBS.join(', ')})`,
      'GET /api/v1/themes/{id}: getThemesId is made from the path',
      'DELETE /api/v1/themes/{id}: deleteThemeV1 is made from the path',
    ]);
  });

  it('the published names are exactly the pinned list (a rename is a deliberate, reviewed change)', () => {
    const actual = Object.fromEntries(operations(doc).map(({ where, op }) => [where, op.operationId]));
    expect(actual).to.deep.equal(PUBLISHED);
    for (const name of RESERVED) expect(Object.values(actual), `${name} is reserved`).not.to.include(name);
  });

  it('docs/authoring.md lists every published name with its route, and the reserved ones', () => {
    const { published, reserved } = documentedNames();
    expect(published).to.deep.equal(PUBLISHED);
    expect(reserved).to.deep.equal(RESERVED);
  });

  it('each operation has one tag, described in the tags list, a summary and a description', () => {
    const described = new Map((doc.tags ?? []).map((t) => [t.name, t.description ?? '']));
    const used = new Set<string>();
    for (const { where, op } of operations(doc)) {
      expect(op.tags, where).to.have.length(1);
      const tag = op.tags![0];
      used.add(tag);
      expect(described.get(tag), `${where}: tag ${tag} is described`).to.be.a('string').and.not.equal('');
      expect(op.summary, `${where} summary`).to.be.a('string').and.not.equal('');
      expect(op.description, `${where} description`).to.be.a('string').and.not.equal('');
      expect(op.description, `${where}: the description says more than the summary`).not.to.equal(op.summary);
    }
    expect(
      [...described.keys()].filter((t) => !used.has(t)),
      'tags no operation uses',
    ).to.deep.equal([]);
  });

  it('building the document refuses an operationId used by two routes', () => {
    const built = buildApp({ ...app.rt, relay: NO_RELAY });
    built.api.route(
      {
        method: 'get',
        path: '/__test/courses',
        operationId: 'listCourses',
        summary: 'a second listCourses',
        description: 'Registered by this test only.',
        tags: ['Courses'],
        responses: { 200: { description: 'ok', schema: z.unknown() } },
      },
      (ctx) => {
        ctx.body = { data: [] };
      },
    );
    expect(() => built.openapi()).to.throw(
      'operationId listCourses is used by both GET /api/v1/courses and GET /api/v1/__test/courses',
    );
  });
});
