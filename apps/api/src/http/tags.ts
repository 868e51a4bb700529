/**
 * The document's tags: one per resource, each operation under exactly one. A route names its tag from this list
 * (the route spec's type refuses any other), so every tag in the document has a description.
 */
export const API_TAGS = {
  Health: 'Liveness, readiness and Prometheus metrics of the API process. No key.',
  Docs: 'This OpenAPI document and the readable reference built on it. No key.',
  Workspace: 'The workspace the calling API key belongs to, and its plan.',
  Identities:
    'Learners as your system knows them, keyed by your externalId; the embed identity token names one of them.',
  Webhooks: 'Endpoints that receive signed event deliveries, their delivery log, resends and test events.',
  Courses:
    'Courses with their screens and blocks: create, update, publish, import (CSV, SCORM), export as SCORM, preview.',
  Themes:
    'Design tokens and custom fonts that style the player for the courses that use them (Scale and up).',
  'Certificate templates':
    'Designs of the PDF certificates issued when a learner passes a course (Scale and up).',
  Collections: 'Ordered groups of courses (every plan).',
  Generation:
    'AI course drafts from a prompt and an optional source page, as asynchronous jobs to poll (Build and up).',
  Media:
    'Images, video and audio uploaded into the private store; blocks reference them as media://<id> and the player signs them (every plan).',
  Translations:
    'Locales of a course: its translatable texts and the translated fields per locale (Scale and up).',
  Completions: "Learners' runs of a course: progress, score, answers and each finished attempt.",
  'Embed keys':
    'Secrets your backend signs identity tokens with, so the embed page and the Player API know the learner.',
  'Issued certificates': 'Certificates issued to learners: their record and their PDF.',
  Verification:
    'Public checks of an issued certificate by its serial, and the issuer profiles behind its credentials.',
  'Tool server':
    'The MCP tool server for AI clients (Streamable HTTP at /mcp): every /api/v1 operation through the same key, ' +
    'plus workflow tools, resources and prompts. See docs/mcp.md.',
  'Player API':
    'The player surface: the embed page and /player/v1, what a browser player, a headless player or a ' +
    'tracked SCORM package speaks. No API key: learners are identified by a token the customer signs ' +
    'with an embed key; each run gets a short-lived run token. See docs/player-api.md.',
} as const satisfies Record<string, string>;

export type ApiTag = keyof typeof API_TAGS;
