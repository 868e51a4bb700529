import { boundQuery, type EntityManager } from '@lectern/db';
import { notFound } from '@lectern/errors';
import { readableAnswers } from '@lectern/courses';
import type {
  AttemptDto,
  CompletionDto,
  CompletionWithAnswersDto,
  CompletionsQuery,
} from '@lectern/contracts';

/** Completions and attempts through the keyed API (read-only), and their row → DTO mappers. */

export interface IdentityRef {
  id: string;
  externalId: string;
  name: string | null;
  email: string | null;
}

/** The `identity` of an event payload: the learner, or null for an anonymous run. */
export function eventIdentityOf(identity: IdentityRef | null) {
  return identity
    ? { id: identity.id, externalId: identity.externalId, name: identity.name, email: identity.email }
    : null;
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));
const iso = (d: Date | string): string => new Date(d).toISOString();

/**
 * `passed` is judged at read time against the course's current pass mark: null without a mark or before the
 * first finish; a course with a mark but no graded block passes every finish (nothing to fail).
 */
export function passedNow(
  score: number | null,
  attempt: number | null,
  passingScore: number | null,
): boolean | null {
  if (passingScore === null || attempt === null) return null;
  return score === null ? true : score >= passingScore;
}

export interface CompletionRow {
  id: string;
  course_id: string;
  identity_id: string | null;
  identity_external_id: string | null;
  status: 'in_progress' | 'completed';
  score: string | null;
  passed_at_completion: boolean | null;
  passing_score_at_completion: string | null;
  attempt: number | null;
  content_hash: string;
  source: 'embed' | 'scorm';
  time_spent_seconds: number;
  last_screen_id: string | null;
  progress_percent: string;
  locale: string;
  started_at: Date;
  last_seen_at: Date;
  completed_at: Date | null;
  course_passing_score: string | null;
  answers?: Record<string, unknown>;
}

export function completionDto(r: CompletionRow): CompletionDto {
  const score = num(r.score);
  return {
    id: r.id,
    courseId: r.course_id,
    identityId: r.identity_id,
    identityExternalId: r.identity_external_id,
    status: r.status,
    score,
    passed: passedNow(score, r.attempt, num(r.course_passing_score)),
    passedAtCompletion: r.passed_at_completion,
    passingScoreAtCompletion: num(r.passing_score_at_completion),
    attempt: r.attempt,
    contentHash: r.content_hash,
    source: r.source,
    timeSpentSeconds: r.time_spent_seconds,
    lastScreenId: r.last_screen_id,
    progressPercent: Number(r.progress_percent),
    locale: r.locale,
    startedAt: iso(r.started_at),
    lastSeenAt: iso(r.last_seen_at),
    completedAt: r.completed_at ? iso(r.completed_at) : null,
  };
}

const SELECT = `select c.id, c.course_id, c.identity_id, i.external_id as identity_external_id, c.status, c.score,
       c.passed_at_completion, c.passing_score_at_completion, c.attempt, c.content_hash, c.source,
       c.time_spent_seconds, c.last_screen_id, c.progress_percent, c.locale, c.started_at, c.last_seen_at,
       c.completed_at, co.passing_score as course_passing_score`;
const FROM = `from completions c join courses co on co.id = c.course_id
       left join identities i on i.id = c.identity_id`;

/**
 * GET /completions: newest first by startedAt; with `completedAfter`, only runs finished after that instant,
 * newest first by completedAt. In-progress runs are included (unless filtered out); answers never are.
 */
export async function listCompletions(
  em: EntityManager,
  workspaceId: string,
  q: Omit<CompletionsQuery, 'limit' | 'offset'>,
  paging: { limit: number; offset: number },
): Promise<{ rows: CompletionDto[]; total: number }> {
  const where = ['c.workspace_id = ?'];
  const params: unknown[] = [workspaceId];
  const add = (cond: string, v: unknown) => {
    where.push(cond);
    params.push(v);
  };
  if (q.courseId !== undefined) add('c.course_id = ?', q.courseId);
  if (q.identityId !== undefined) add('c.identity_id = ?', q.identityId);
  if (q.identityExternalId !== undefined) add('i.external_id = ?', q.identityExternalId);
  if (q.status !== undefined) add('c.status = ?', q.status);
  if (q.completedAfter !== undefined) add('c.completed_at > ?', new Date(q.completedAfter));
  const order =
    q.completedAfter !== undefined ? 'c.completed_at desc, c.id desc' : 'c.started_at desc, c.id desc';
  const cond = where.join(' and ');
  const [{ n }] = await boundQuery<{ n: number }>(
    em,
    `select count(*)::int as n ${FROM} where ${cond}`,
    params,
  );
  const rows = await boundQuery<CompletionRow>(
    em,
    `${SELECT} ${FROM} where ${cond} order by ${order} limit ? offset ?`,
    [...params, paging.limit, paging.offset],
  );
  return { rows: rows.map(completionDto), total: n };
}

/**
 * One run with its answers. With the answer-key secret, `answerItems` reads its match and ranking answers: the
 * keyed ids the learner sent mapped back to the course's item ids and texts (docs/player-api.md "Readable answers").
 */
export async function getCompletion(
  em: EntityManager,
  workspaceId: string,
  id: string,
  opts: { answerKeySecret?: () => string } = {},
): Promise<CompletionWithAnswersDto> {
  const [r] = await boundQuery<CompletionRow & { answers: Record<string, unknown> | null; screens: unknown }>(
    em,
    `${SELECT}, c.answers, (select co.screens from courses co where co.id = c.course_id) as screens ${FROM}
      where c.id = ? and c.workspace_id = ?`,
    [id, workspaceId],
  );
  if (!r) throw notFound('Completion');
  const answers = r.answers ?? {};
  const secret = opts.answerKeySecret;
  return {
    ...completionDto(r),
    answers,
    answerItems: secret ? readableAnswers(r.screens, answers, { secret: secret() }) : {},
  };
}

interface AttemptRow {
  id: string;
  course_id: string;
  identity_id: string | null;
  attempt: number;
  score: string | null;
  passed: boolean | null;
  passing_score: string | null;
  content_hash: string;
  source: 'embed' | 'scorm';
  locale: string;
  time_spent_seconds: number;
  started_at: Date;
  completed_at: Date;
  answers: Record<string, unknown>;
}

export function attemptDto(r: AttemptRow): AttemptDto {
  return {
    id: r.id,
    courseId: r.course_id,
    identityId: r.identity_id,
    attempt: r.attempt,
    score: num(r.score),
    passed: r.passed,
    passingScore: num(r.passing_score),
    contentHash: r.content_hash,
    source: r.source,
    locale: r.locale,
    timeSpentSeconds: r.time_spent_seconds,
    startedAt: iso(r.started_at),
    completedAt: iso(r.completed_at),
    answers: r.answers,
  };
}

/** GET /completions/:id/attempts: newest first; 404 for a completion not in the workspace. */
export async function listAttempts(
  em: EntityManager,
  workspaceId: string,
  completionId: string,
  paging: { limit: number; offset: number },
): Promise<{ rows: AttemptDto[]; total: number }> {
  const [c] = await boundQuery<{ n: number }>(
    em,
    `select (select count(*)::int from attempts a where a.completion_id = c.id) as n
       from completions c where c.id = ? and c.workspace_id = ?`,
    [completionId, workspaceId],
  );
  if (!c) throw notFound('Completion');
  const rows = await boundQuery<AttemptRow>(
    em,
    `select id, course_id, identity_id, attempt, score, passed, passing_score, content_hash, source, locale,
            time_spent_seconds, started_at, completed_at, answers
       from attempts where completion_id = ? and workspace_id = ?
      order by attempt desc limit ? offset ?`,
    [completionId, workspaceId, paging.limit, paging.offset],
  );
  return { rows: rows.map(attemptDto), total: c.n };
}
