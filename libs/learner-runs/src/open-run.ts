import { newId, boundQuery, type EntityManager } from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import { OUTBOX_RECORDSET, outboxRecordset, prepareEvent } from '@lectern/events';
import { OWN_SCOPE, lmsScope, upsertIdentities } from '@lectern/identities';
import type { CustomFont, OpenRun, OpenRunResult } from '@lectern/contracts';
import type { SecretBox } from './ports.js';
import type { RunTokens } from './run-token.js';
import type { TrackingTokens } from './tracking-token.js';
import { trackingSecretOf } from './tracking-secret.js';
import { verifyIdentityToken, type VerifiedLearner } from './embed-keys.js';
import {
  assertBillingOk,
  assertMayServe,
  countView,
  hitAnonymousLimits,
  uncountView,
  type AnonymousLimits,
  type WorkspaceAccess,
} from './limits.js';
import { assertAnonymousAllowed, assertOriginAllowed, type PlayerAccess } from './player-access.js';
import {
  indexCourse,
  materialOf,
  pickLocale,
  type CourseIndex,
  type CourseRow,
  type ServedTranslation,
} from './served.js';
import { feedbackFor } from '@lectern/courses';
import { reviewOfFinishedPass } from './run-state.js';
import { buildLearnerCourse, type LearnerTheme, type MediaUrl } from './learner-course.js';
import { eventIdentityOf, type IdentityRef } from './completions.js';

interface PublishedRow {
  id: string;
  workspace_id: string;
  title: string;
  screens: unknown[];
  content_hash: string;
  updated_at: string;
  direction: 'ltr' | 'rtl';
  locale: string;
  passing_score: string | null;
  quiz_feedback: 'deferred' | 'immediate';
  navigation: 'default' | 'hidden';
  custom_fonts: CustomFont[];
  completion: 'free' | 'sequential';
  review_show_correct_answers: boolean;
  plan: WorkspaceAccess['plan'];
  billing_status: WorkspaceAccess['billingStatus'];
  grace_until: Date | null;
  theme: LearnerTheme | null;
  locales: string[];
  allowed_origins: string[] | null;
  anonymous_runs: boolean | null;
}

export interface PublishedCourse {
  course: CourseRow;
  workspace: WorkspaceAccess;
  theme: LearnerTheme | null;
  /** Locales the course has translations for. */
  translated: string[];
  /** Who may open runs and frame the embed page (player settings). */
  access: PlayerAccess;
}

/**
 * A published course with its workspace, theme and translated locales, in one statement; 404 for a draft,
 * unknown or any other course alike (the message never says which).
 */
export async function findPublishedCourse(em: EntityManager, courseId: string): Promise<PublishedCourse> {
  const [r] = await boundQuery<PublishedRow>(
    em,
    `select c.id, c.workspace_id, c.title, c.screens, c.content_hash, c.updated_at::text as updated_at, c.direction, c.locale, c.passing_score, c.quiz_feedback,
            c.navigation, c.custom_fonts, c.completion, c.review_show_correct_answers, w.plan, w.billing_status, w.grace_until,
            (select json_build_object('id', t.id, 'name', t.name, 'tokens', t.tokens, 'customFonts', t.custom_fonts)
               from themes t where t.id = c.theme_id) as theme,
            array(select tr.locale from course_translations tr where tr.course_id = c.id) as locales,
            ps.allowed_origins, ps.anonymous_runs
       from courses c join workspaces w on w.id = c.workspace_id
       left join player_settings ps on ps.workspace_id = c.workspace_id
      where c.id = ? and c.status = 'published'`,
    [courseId],
    { prepared: true },
  );
  if (!r) throw notFound('Course');
  return {
    course: {
      id: r.id,
      title: r.title,
      screens: r.screens,
      contentHash: r.content_hash,
      direction: r.direction,
      locale: r.locale,
      passingScore: r.passing_score === null ? null : Number(r.passing_score),
      quizFeedback: r.quiz_feedback,
      navigation: r.navigation,
      // The course's own fonts travel with it, as in the preview and SCORM packages (docs/player-api.md); a course
      // without any sends no field, as before.
      ...(r.custom_fonts.length > 0 ? { customFonts: r.custom_fonts } : {}),
      completion: r.completion,
      reviewShowCorrectAnswers: r.review_show_correct_answers,
      version: `${r.content_hash} ${r.updated_at}`,
    },
    workspace: {
      id: r.workspace_id,
      plan: r.plan,
      billingStatus: r.billing_status,
      graceUntil: r.grace_until ? new Date(r.grace_until) : null,
    },
    theme: r.theme,
    translated: r.locales,
    access: { allowedOrigins: r.allowed_origins, anonymousRuns: r.anonymous_runs ?? true },
  };
}

/**
 * What the embed page checks before it boots the player: the course is published (404), the identity token,
 * when given, verifies (401), and the workspace may serve (402). Counts no view: the player's open does.
 */
export async function checkEmbed(
  ports: { em: EntityManager; secrets: SecretBox },
  courseId: string,
  identity: string | undefined,
): Promise<PublishedCourse> {
  const published = await findPublishedCourse(ports.em, courseId);
  if (identity !== undefined)
    await verifyIdentityToken(ports.em, ports.secrets, identity, {
      id: courseId,
      workspaceId: published.workspace.id,
    });
  await assertMayServe(ports.em, published.workspace);
  return published;
}

interface CompletionRow {
  id: string;
  status: 'in_progress' | 'completed';
  attempt: number | null;
  pass: number;
  content_hash: string;
  last_screen_id: string | null;
  progress_percent: string;
  answers: Record<string, unknown>;
  locale: string;
  score: string | null;
  passed_at_completion: boolean | null;
  certificate_serial: string | null;
  inserted: boolean;
}

export interface OpenRunPorts {
  em: EntityManager;
  secrets: SecretBox;
  tokens: RunTokens;
  tracking: TrackingTokens;
  answerKeySecret: string;
  /** Signs the course's stored media references for the learner (docs/media.md "Serving"); absent: as stored. */
  mediaUrl?: (workspaceId: string) => MediaUrl;
  /** Who is asking: checked against the workspace's player settings and the anonymous limits. */
  client: OpenClient;
  /** The public verification page of a serial (`PUBLIC_URL/verify/<serial>`), for an issued certificate. */
  verifyUrl: (serial: string) => string;
}

export interface OpenClient {
  /** The request's `Origin` header, when sent. */
  origin: string | undefined;
  /** The client address (the anonymous per-address limit). */
  address: string;
  /** The service's own origin (its embed page opens runs from there). */
  ownOrigin: string;
  anonymousLimits: AnonymousLimits;
}

/**
 * POST /player/v1/runs: opens or resumes the single completion row of (course, learner), in one transaction:
 * the identity upsert (identity.created once, for a learner seen the first time), the row upsert
 * (INSERT … ON CONFLICT: two concurrent first opens still make one row) and course.viewed. The view is
 * counted just before (a spent Sandbox allowance refuses with 402 and writes nothing) and given back if the
 * transaction fails.
 */
export async function openRun(
  ports: OpenRunPorts,
  input: OpenRun,
  now = new Date(),
): Promise<{ created: boolean; result: OpenRunResult }> {
  const published = await findPublishedCourse(ports.em, input.courseId);
  const { course, workspace, theme } = published;
  // Before anything is verified or counted: an open from a foreign origin spends nothing of the workspace's.
  assertOriginAllowed(published.access, ports.client.origin, ports.client.ownOrigin);
  let learner: VerifiedLearner | null = null;
  let source: 'embed' | 'scorm' = 'embed';
  let scope = OWN_SCOPE;
  if (input.tracking !== undefined) {
    const both = (['identity', 'anonymousId'] as const).filter((k) => input[k] !== undefined);
    if (both.length > 0)
      throw new AppError('invalid_request', 'Send tracking alone, without identity or anonymousId', {
        issues: both.map((k) => ({
          code: 'unexpected',
          path: [k],
          message: 'not allowed together with tracking',
        })),
      });
    const claims = await ports.tracking.verify(input.tracking.token);
    // A token is bound to one course of one workspace: a package cannot report runs of another course.
    if (claims.courseId !== course.id || claims.workspaceId !== workspace.id)
      throw new AppError('unauthorized', 'Tracking token refused: it was issued for another course');
    const secret = await trackingSecretOf(ports.em, workspace.id, course.id);
    if (claims.version !== secret.version)
      throw new AppError(
        'unauthorized',
        "Tracking token refused: the course's tracking secret was rotated after this package was exported; export it again",
      );
    // The LMS's word for who the learner is, and nobody else's: the id lives in this course's own scope, so it
    // never names (renames, or claims before them) the workspace's signed learners or another course's.
    learner = { externalId: input.tracking.learnerId, name: input.tracking.learnerName };
    scope = lmsScope(course.id);
    source = 'scorm';
  } else if (input.identity !== undefined) {
    learner = await verifyIdentityToken(ports.em, ports.secrets, input.identity, {
      id: course.id,
      workspaceId: workspace.id,
    });
  } else if (input.anonymousId === undefined) {
    throw new AppError('invalid_request', 'Send identity (a signed identity token) or anonymousId', {
      issues: [
        {
          code: 'required',
          path: ['anonymousId'],
          message: 'required when no identity is given (keep one per browser, e.g. in localStorage)',
        },
      ],
    });
  } else {
    assertAnonymousAllowed(published.access);
    await hitAnonymousLimits(
      ports.em,
      { address: ports.client.address, courseId: course.id, anonymousId: input.anonymousId },
      ports.client.anonymousLimits,
    );
  }
  // Billing is checked first (a blocked workspace does no work); the allowance is enforced by countView.
  assertBillingOk(workspace, now);

  const locale = pickLocale(course.locale, published.translated, input.lang);
  let translation: ServedTranslation | null = null;
  if (locale !== course.locale) {
    const [t] = await boundQuery<{ content: Record<string, unknown>; version: string }>(
      ports.em,
      `select content, id || ' ' || updated_at as version from course_translations where course_id = ? and locale = ?`,
      [course.id, locale],
    );
    if (t) translation = { locale, content: t.content, version: t.version };
  }
  const served = await buildLearnerCourse(
    { course, translation, theme },
    { answerKeys: { secret: ports.answerKeySecret }, mediaUrl: ports.mediaUrl?.(workspace.id) },
  );

  // Counted first: a spent allowance refuses the open (402) before anything is written.
  await countView(ports.em, workspace, now);
  // A learner's open is two statements (identity, then run) in one transaction; an anonymous open is the run's
  // statement alone, which needs no transaction of its own (two round trips fewer).
  const inTransaction = <T>(work: (em: EntityManager) => Promise<T>): Promise<T> =>
    learner ? ports.em.transactional(work) : work(ports.em);
  const row = await inTransaction(async (tx) => {
    let identity: IdentityRef | null = null;
    if (learner) {
      const [r] = await upsertIdentities(
        tx,
        workspace.id,
        [{ externalId: learner.externalId, name: learner.name, email: learner.email }],
        scope,
      );
      identity = r.identity;
    }
    const conflict = identity ? '(course_id, identity_id)' : '(course_id, anonymous_id)';
    // One row per (course, learner). A row keeps the source it was opened with: an LMS-asserted learner id
    // never takes over a run whose learner the customer's backend signed (nor the reverse), so the update
    // only happens for the same source and a clash answers 409.
    // Resuming refreshes what is served (locale, fingerprint) only while the pass is open: a finished pass keeps
    // the material its result was judged against.
    const viewed = prepareEvent(workspace.id, 'course.viewed', {
      course: { id: course.id, title: course.title },
      identity: eventIdentityOf(identity),
    });
    const [row] = await boundQuery<CompletionRow>(
      tx,
      `with c0 as (insert into completions as c (id, workspace_id, course_id, identity_id, anonymous_id, source, status, pass,
              pass_started_at, content_hash, locale, answers, started_at, last_seen_at, last_event_at, rate_window_start)
       values (?, ?, ?, ?, ?, ?, 'in_progress', 1, ?, ?, ?, '{}'::jsonb, ?, ?, ?, ?)
       on conflict ${conflict} do update set
         last_seen_at = excluded.last_seen_at,
         last_event_at = excluded.last_event_at,
         locale = case when coalesce(c.attempt, 0) < c.pass then excluded.locale else c.locale end,
         content_hash = case when coalesce(c.attempt, 0) < c.pass then excluded.content_hash else c.content_hash end
       where c.source = excluded.source
       returning c.id, c.status, c.attempt, c.pass, c.content_hash, c.last_screen_id, c.progress_percent, c.answers,
                 c.locale, c.score, c.passed_at_completion,
                 (select ic.serial from issued_certificates ic where ic.completion_id = c.id) as certificate_serial,
                 (xmax = 0) as inserted),
       ev as (insert into outbox_events (id, workspace_id, type, data, created_at)
              ${OUTBOX_RECORDSET} where exists (select 1 from c0))
       select * from c0`,
      [
        newId('cmp'),
        workspace.id,
        course.id,
        identity?.id ?? null,
        identity ? null : input.anonymousId,
        source,
        now,
        served.contentHash,
        served.locale,
        now,
        now,
        now,
        now,
        outboxRecordset([viewed]),
      ],
      { prepared: true },
    );
    if (!row)
      throw new AppError(
        'conflict',
        `This learner already has a run of this course recorded with another source than ${source}`,
      );
    return row;
  }).catch(async (err: unknown) => {
    await uncountView(ports.em, workspace, now);
    throw err;
  });

  const runToken = await ports.tokens.sign({ completionId: row.id, workspaceId: workspace.id });
  // The graded blocks of the served material, indexed once for the review and the feedback below (when either is due).
  let index: CourseIndex | undefined;
  const graded = () => (index ??= indexCourse(materialOf(course, translation).screens));
  return {
    created: row.inserted,
    result: {
      runToken,
      completion: {
        id: row.id,
        status: row.status,
        attempt: row.attempt,
        lastScreenId: row.last_screen_id,
        progressPercent: Number(row.progress_percent),
        answers: row.answers,
        locale: row.locale,
        // A run finished before: its last result, so a player resuming it knows how it ended (the certificate).
        ...(row.attempt !== null
          ? {
              result: {
                score: row.score === null ? null : Number(row.score),
                passed: row.passed_at_completion,
                attempt: row.attempt,
                // Its review again, while that pass is the latest and served as it was judged (a reload, another
                // device): the same items the finishing batch answered.
                ...(row.attempt === row.pass && row.content_hash === served.contentHash
                  ? {
                      review: reviewOfFinishedPass(graded(), row.answers, course, ports.answerKeySecret),
                    }
                  : {}),
              },
            }
          : {}),
        // The run's certificate once issued: it stays the learner's whatever a later pass scores.
        ...(row.certificate_serial
          ? {
              certificate: {
                serial: row.certificate_serial,
                verifyUrl: ports.verifyUrl(row.certificate_serial),
              },
            }
          : {}),
        ...(course.quizFeedback === 'immediate' && Object.keys(row.answers).length > 0
          ? { feedback: givenFeedback(graded(), row.answers, ports.answerKeySecret) }
          : {}),
      },
      course: served,
    },
  };
}

/**
 * Immediate mode, a resumed run: the verdicts already given for its stored graded answers (with explanation and
 * a scenario's outcome, in the served locale), so the player shows them instead of reopening the questions.
 * Nothing more than the events call answered for the same answers.
 */
function givenFeedback(
  idx: CourseIndex,
  answers: Record<string, unknown>,
  secret: string,
): { blockId: string; correct: boolean; explanation?: string; outcome?: string }[] {
  return idx.graded
    .filter((id) => Object.hasOwn(answers, id))
    .map((blockId) => {
      const { correct, explanation, outcome } = feedbackFor(
        idx.blocks.get(blockId)!.block.raw,
        answers[blockId],
        {
          secret,
        },
      );
      return {
        blockId,
        correct,
        ...(explanation?.trim() ? { explanation } : {}),
        ...(outcome?.trim() ? { outcome } : {}),
      };
    });
}
