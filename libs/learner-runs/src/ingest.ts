import { Batcher, newId, boundQuery, type EntityManager } from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import { OUTBOX_KEYED_RECORDSET, outboxRecordset, prepareEvent, type PreparedEvent } from '@lectern/events';
import type { EventBatch, EventBatchResultDto, RunStateDto } from '@lectern/contracts';
import { assertBillingOk, type WorkspaceAccess } from './limits.js';
import { VersionCache, runMaterial, type RunMaterial } from './served.js';
import type { IdentityRef } from './completions.js';
import { applyEvents, checkEvents, type RunSnapshot } from './run-state.js';

/**
 * The events and retake calls of a run.
 *
 * An event batch is two statements and no explicit transaction: the first reads the run and everything the
 * batch needs (course version, learner, workspace, whether the batch id was seen, the rate window); the second
 * writes the row (with the rate count), the batch id and its stored answer, the outbox events and the attempt
 * of a finish together, on the condition that the row is still the version read (`xmin`). A batch that lost a
 * race with another call of the same run (the row changed in between) writes nothing and is applied again
 * under the row lock (one transaction, as a retake always is). Every call of one run is thus serialised on its
 * row either way, and the batch id's primary key makes a double claim fail the whole statement.
 *
 * Under load both statements are shared: the batches of many runs arriving together are read by one statement
 * and written by one statement (group commit, `groupsOf` below; docs/player-api.md).
 */

export interface IngestPorts {
  em: EntityManager;
  answerKeySecret: string;
  /** PLAYER_REQUESTS_PER_MINUTE_PER_RUN; 0 = off. */
  perRunPerMinute: number;
}

export interface RunRef {
  completionId: string;
  workspaceId: string;
}

interface LockedRow {
  id: string;
  workspace_id: string;
  course_id: string;
  source: 'embed' | 'scorm';
  status: 'in_progress' | 'completed';
  attempt: number | null;
  pass: number;
  pass_started_at: Date;
  pass_time_seconds: number;
  content_hash: string;
  time_spent_seconds: number;
  last_screen_id: string | null;
  progress_percent: string;
  locale: string;
  answers: Record<string, unknown>;
  last_event_at: Date;
  rate_window_count: number;
  retry_after: number;
  course: {
    title: string;
    status: string;
    contentHash: string;
    updatedAt: string;
    passingScore: string | number | null;
    quizFeedback: 'deferred' | 'immediate';
    completion: 'free' | 'sequential';
    reviewShowCorrectAnswers: boolean;
    locale: string;
    direction: 'ltr' | 'rtl';
  };
  /** The version of the translation of the run's locale (id and `updated_at`), null when there is none. */
  translation: string | null;
  identity: IdentityRef | null;
  workspace: {
    plan: WorkspaceAccess['plan'];
    billingStatus: WorkspaceAccess['billingStatus'];
    graceUntil: string | null;
  };
}

// Named columns, not `c.*`: the batch's read is a prepared statement (see boundQuery).
const RUN_COLUMNS = `c.id, c.workspace_id, c.course_id, c.source, c.status, c.attempt, c.pass, c.pass_started_at,
  c.pass_time_seconds, c.content_hash, c.time_spent_seconds, c.last_screen_id, c.progress_percent, c.locale,
  c.answers, c.last_event_at, c.rate_window_count,
  greatest(1, ceil(extract(epoch from (c.rate_window_start + interval '1 minute' - clock_timestamp()))))::int as retry_after,
  (select json_build_object('title', co.title, 'status', co.status, 'contentHash', co.content_hash,
          'updatedAt', co.updated_at::text, 'passingScore', co.passing_score, 'quizFeedback', co.quiz_feedback,
          'completion', co.completion, 'reviewShowCorrectAnswers', co.review_show_correct_answers,
          'locale', co.locale, 'direction', co.direction) from courses co where co.id = c.course_id) as course,
  (select t.id || ' ' || t.updated_at from course_translations t
    where t.course_id = c.course_id and t.locale = c.locale) as translation,
  (select json_build_object('id', i.id, 'externalId', i.external_id, 'name', i.name, 'email', i.email)
     from identities i where i.id = c.identity_id) as identity,
  (select json_build_object('plan', w.plan, 'billingStatus', w.billing_status, 'graceUntil', w.grace_until)
     from workspaces w where w.id = c.workspace_id) as workspace`;
const RETURNING = `returning ${RUN_COLUMNS}`;

export const RATE_SET = `rate_window_count = case when c.rate_window_start <= clock_timestamp() - interval '1 minute'
                                         then 1 else c.rate_window_count + 1 end,
  rate_window_start = case when c.rate_window_start <= clock_timestamp() - interval '1 minute'
                           then clock_timestamp() else c.rate_window_start end`;

/** Locks the run, counts the call in the run's rate window and checks the course and workspace still serve. */
async function lockRun(tx: EntityManager, ports: IngestPorts, ref: RunRef): Promise<LockedRow> {
  const [row] = await boundQuery<LockedRow>(
    tx,
    `update completions c set ${RATE_SET} where c.id = ? and c.workspace_id = ? ${RETURNING}`,
    [ref.completionId, ref.workspaceId],
  );
  return checkRun(ports, row, row?.rate_window_count);
}

interface ReadRow extends LockedRow {
  /** The row version read (`xmin`): the batch's writes apply only to this version. */
  version: string;
  /** What the call's count in the run's rate window will be once it is counted. */
  calls_in_window: number;
  /** Whether this batch id was applied already, and what it answered. */
  seen: boolean;
  response: EventBatchResultDto | null;
}

interface ReadKey {
  completionId: string;
  workspaceId: string;
  batchId: string;
}

/**
 * Reads runs as their batches need them, counting nothing: `calls_in_window` is what the run's count will be once
 * this call is counted (the batch's write counts it). One statement for any number of batches (a group, below);
 * each answer is the row of its key, or undefined when there is no such run.
 */
async function readRuns(em: EntityManager, keys: ReadKey[]): Promise<(ReadRow | undefined)[]> {
  const rows = await boundQuery<ReadRow & { ord: string }>(
    em,
    `select ${RUN_COLUMNS}, c.xmin::text as version,
       case when c.rate_window_start <= clock_timestamp() - interval '1 minute' then 1
            else c.rate_window_count + 1 end as calls_in_window,
       b.batch_id is not null as seen, b.response, q.ord
       from unnest(?::text[], ?::text[], ?::text[]) with ordinality as q(id, workspace_id, batch_id, ord)
       join completions c on c.id = q.id and c.workspace_id = q.workspace_id
       left join completion_batches b on b.completion_id = c.id and b.batch_id = q.batch_id`,
    [keys.map((k) => k.completionId), keys.map((k) => k.workspaceId), keys.map((k) => k.batchId)],
    { prepared: true },
  );
  const out: (ReadRow | undefined)[] = new Array(keys.length);
  for (const r of rows) out[Number(r.ord) - 1] = r;
  return out;
}

/**
 * The batches' reads and writes of this process, group-committed (see Batcher): while a statement is under way,
 * the batches arriving meanwhile leave together as one read, and later one write. Keyed by the ORM's driver, so
 * each runtime (a test process may hold several) groups only its own batches on its own pool.
 */
interface Groups {
  reads: Batcher<{ em: EntityManager; key: ReadKey }, ReadRow | undefined>;
  writes: Batcher<{ em: EntityManager; write: BatchWrite }, boolean>;
}
const groupsByDriver = new WeakMap<object, Groups>();
/** Statements of each kind under way at once; at most this many × 2 pooled connections go to batches. */
const GROUPS_IN_FLIGHT = 1;
const MAX_GROUP = 64;

function groupsOf(em: EntityManager): Groups {
  const driver = em.getDriver();
  let g = groupsByDriver.get(driver);
  if (!g) {
    g = {
      reads: new Batcher(
        (items) =>
          readRuns(
            items[0].em,
            items.map((i) => i.key),
          ),
        { parallel: GROUPS_IN_FLIGHT, maxBatch: MAX_GROUP },
      ),
      // A failed statement fails its whole group. One batch id claimed twice (a retry racing its first
      // delivery: a unique violation) or a deadlock with another replica's group sends each batch of the
      // group to the locked path, alone (tryBatch).
      writes: new Batcher(
        (items) =>
          writeBatches(
            items[0].em,
            items.map((i) => i.write),
          ),
        { parallel: GROUPS_IN_FLIGHT, maxBatch: MAX_GROUP, conflictKey: (i) => i.write.id },
      ),
    };
    groupsByDriver.set(driver, g);
  }
  return g;
}

/** unique_violation (a batch id claimed twice) and deadlock_detected: nothing of the statement stays. */
const RETRY_LOCKED = new Set(['23505', '40P01']);
const retryLocked = (err: unknown) => RETRY_LOCKED.has((err as { code?: string }).code ?? '');

/**
 * Reads the run for a batch. With `lock`, inside a transaction, the row is locked first and read alone, so what
 * is read cannot change before the write; without, the read joins the process's current group.
 */
async function readRun(
  em: EntityManager,
  ports: IngestPorts,
  ref: RunRef,
  batchId: string,
  lock: boolean,
): Promise<ReadRow> {
  const key = { completionId: ref.completionId, workspaceId: ref.workspaceId, batchId };
  let row: ReadRow | undefined;
  if (lock) {
    await boundQuery(em, 'select 1 from completions where id = ? and workspace_id = ? for update', [
      ref.completionId,
      ref.workspaceId,
    ]);
    [row] = await readRuns(em, [key]);
  } else row = await groupsOf(em).reads.add({ em, key });
  return checkRun(ports, row, row?.calls_in_window);
}

/** 404 for a deleted run or an unpublished course, 429 past the run's rate window, 402 for a blocked workspace. */
function checkRun<T extends LockedRow>(ports: IngestPorts, row: T | undefined, calls = 0): T {
  // The run was deleted (with its course or learner) after its token was issued.
  if (!row) throw notFound('Run');
  if (ports.perRunPerMinute > 0 && calls > ports.perRunPerMinute) {
    throw new AppError(
      'rate_limited',
      `Too many calls for this run: at most ${ports.perRunPerMinute} a minute`,
      {
        retryAfter: row.retry_after,
      },
    );
  }
  if (row.course.status !== 'published') throw notFound('Course');
  assertBillingOk({
    id: row.workspace_id,
    plan: row.workspace.plan,
    billingStatus: row.workspace.billingStatus,
    graceUntil: row.workspace.graceUntil ? new Date(row.workspace.graceUntil) : null,
  });
  return row;
}

/** Indexes of recent course versions: a batch reads the course's version, not its screens, when they are here. */
const materials = new VersionCache<RunMaterial>(16);

const materialKey = (
  courseId: string,
  course: { contentHash: string; updatedAt: string; locale: string },
  locale: string,
  translation: string | null,
) =>
  // The source is served when the run's locale is the course's own (a translation of it is then ignored).
  [courseId, course.contentHash, course.updatedAt, locale === course.locale ? '' : (translation ?? '')].join(
    '|',
  );

/**
 * The source and served indexes the batch checks and grades against, for the course version the locked row
 * names: from the cache, else read (screens and translation) and indexed once for every later batch of that
 * version. A course edited between the two reads is indexed and cached under the version actually read.
 */
async function materialFor(tx: EntityManager, row: LockedRow): Promise<RunMaterial> {
  const hit = materials.get(materialKey(row.course_id, row.course, row.locale, row.translation));
  if (hit) return hit;
  const [r] = await boundQuery<{
    title: string;
    screens: unknown[];
    content_hash: string;
    updated_at: string;
    locale: string;
    translation: { version: string; content: Record<string, unknown> } | null;
  }>(
    tx,
    `select co.title, co.screens, co.content_hash, co.updated_at::text as updated_at, co.locale,
            (select json_build_object('version', t.id || ' ' || t.updated_at, 'content', t.content)
               from course_translations t where t.course_id = co.id and t.locale = ?) as translation
       from courses co where co.id = ?`,
    [row.locale, row.course_id],
  );
  const translated = r.translation && row.locale !== r.locale ? r.translation : null;
  const material = runMaterial(r, translated?.content ?? null);
  materials.set(
    materialKey(
      row.course_id,
      { contentHash: r.content_hash, updatedAt: r.updated_at, locale: r.locale },
      row.locale,
      translated?.version ?? null,
    ),
    material,
  );
  return material;
}

const stateOf = (r: {
  status: 'in_progress' | 'completed';
  attempt: number | null;
  progress_percent: string | number;
  last_screen_id: string | null;
}): RunStateDto => ({
  status: r.status,
  attempt: r.attempt,
  progressPercent: Number(r.progress_percent),
  lastScreenId: r.last_screen_id,
});

const snapshotOf = (row: LockedRow): RunSnapshot => ({
  id: row.id,
  courseId: row.course_id,
  source: row.source,
  status: row.status,
  attempt: row.attempt,
  pass: row.pass,
  passStartedAt: row.pass_started_at,
  passTimeSeconds: row.pass_time_seconds,
  timeSpentSeconds: row.time_spent_seconds,
  contentHash: row.content_hash,
  lastScreenId: row.last_screen_id,
  progressPercent: Number(row.progress_percent),
  answers: row.answers,
  lastEventAt: row.last_event_at,
  course: {
    title: row.course.title,
    passingScore: row.course.passingScore === null ? null : Number(row.course.passingScore),
    quizFeedback: row.course.quizFeedback,
    completion: row.course.completion,
    reviewShowCorrectAnswers: row.course.reviewShowCorrectAnswers,
  },
  identity: row.identity,
});

/**
 * POST /player/v1/runs/:id/events. A repeated batch id answers what the first delivery answered and applies
 * nothing. The run finishes when the learner arrives at the last screen during an open pass; the finish is
 * judged after the whole batch is applied (answers sent beside the last screen count), exactly once per pass:
 * the row lock serialises batches and `attempts (completion_id, attempt)` is unique.
 */
export async function applyBatch(
  ports: IngestPorts,
  ref: RunRef,
  batch: EventBatch,
  now = new Date(),
): Promise<EventBatchResultDto> {
  const fast = await tryBatch(ports.em, ports, ref, batch, now, false);
  if (fast) return fast;
  // Another call of this run changed the row between the read and the write (or another transaction holds it,
  // or the group's statement failed as a whole): apply it again under the lock.
  return ports.em.transactional(async (tx) => {
    const locked = await tryBatch(tx, ports, ref, batch, now, true);
    if (!locked) throw new Error(`batch ${batch.batchId} of ${ref.completionId} not applied under the lock`);
    return locked;
  });
}

/**
 * Applies the batch if the row is still the version read; null when another call changed it first or holds it
 * locked, or the group's statement failed as a whole (then nothing of it stayed).
 */
async function tryBatch(
  em: EntityManager,
  ports: IngestPorts,
  ref: RunRef,
  batch: EventBatch,
  now: Date,
  lock: boolean,
): Promise<EventBatchResultDto | null> {
  const row = await readRun(em, ports, ref, batch.batchId, lock);
  if (row.seen) {
    // A retry is answered as the first delivery was, and counted in the run's window like any call.
    await boundQuery(em, `update completions c set ${RATE_SET} where c.id = ?`, [row.id]);
    return row.response ?? { completion: stateOf(row) };
  }
  // The rules are pure (run-state.ts): this reads what they need and writes what they decide.
  const material = await materialFor(em, row);
  checkEvents(batch, material.source);
  const out = applyEvents(snapshotOf(row), batch, material, { secret: ports.answerKeySecret, now });
  const write: BatchWrite = {
    id: row.id,
    version: row.version,
    timeSpent: out.timeSpentSeconds,
    passTime: out.passTimeSeconds,
    lastScreenId: out.lastScreenId,
    progress: out.progress,
    answers: out.answers,
    at: now.toISOString(),
    batchId: batch.batchId,
    response: out.response,
    events: out.events.map((e) => prepareEvent(row.workspace_id, e.type, e.data, now)),
    finish: out.finish && {
      ...out.finish,
      attemptId: newId('att'),
      workspaceId: row.workspace_id,
      courseId: row.course_id,
      identityId: row.identity?.id ?? null,
      contentHash: row.content_hash,
      source: row.source,
      locale: row.locale,
    },
  };
  try {
    // Under the lock the write is this transaction's own; otherwise it joins the process's current group.
    const applied = lock
      ? (await writeBatches(em, [write]))[0]
      : await groupsOf(em).writes.add({ em, write });
    return applied ? out.response : null;
  } catch (err) {
    // The batch id was claimed by a concurrent delivery of the same batch, or the group's statement deadlocked:
    // nothing of it stays, and the batch is applied again under the lock.
    if (!lock && retryLocked(err)) return null;
    throw err;
  }
}

/** What one batch writes: the run's new state, its batch id and answer, its events, and a finish's attempt. */
interface BatchWrite {
  id: string;
  /** The row version read: the write applies only if the row is still that version. */
  version: string;
  timeSpent: number;
  passTime: number;
  lastScreenId: string | null;
  progress: number;
  answers: Record<string, unknown>;
  at: string;
  batchId: string;
  response: EventBatchResultDto;
  events: PreparedEvent[];
  finish: {
    score: number | null;
    passed: boolean | null;
    passingScore: number | null;
    attempt: number;
    attemptId: string;
    workspaceId: string;
    courseId: string;
    identityId: string | null;
    contentHash: string;
    source: 'embed' | 'scorm';
    locale: string;
    startedAt: string;
  } | null;
}

/**
 * Writes batches of different runs in one statement, all or nothing: each run's row only if it is still the
 * version read (the call counted in its rate window), and for each row written its batch id with its answer, its
 * events and a finish's attempt. Answers, per batch, whether it was applied (false: another call of that run
 * changed the row first, or holds it locked). One statement text for one batch or sixty, so it is prepared once.
 *
 * A row locked by another transaction (a batch of that run on the locked path, a retake, a course being deleted)
 * is skipped, never waited for (`skip locked`): that batch counts as not applied and goes the locked path alone,
 * so one busy run never holds up the other runs of the group, nor the groups behind it.
 */
async function writeBatches(em: EntityManager, writes: BatchWrite[]): Promise<boolean[]> {
  const runs = writes.map((w) => ({
    id: w.id,
    version: w.version,
    time_spent: w.timeSpent,
    pass_time: w.passTime,
    last_screen_id: w.lastScreenId,
    progress: w.progress,
    answers: w.answers,
    at: w.at,
    batch_id: w.batchId,
    response: w.response,
    finish: w.finish !== null,
    score: w.finish?.score ?? null,
    passed: w.finish?.passed ?? null,
    passing_score: w.finish?.passingScore ?? null,
    attempt: w.finish?.attempt ?? null,
  }));
  const attempts = writes.flatMap((w) =>
    w.finish
      ? [
          {
            id: w.finish.attemptId,
            workspace_id: w.finish.workspaceId,
            completion_id: w.id,
            course_id: w.finish.courseId,
            identity_id: w.finish.identityId,
            attempt: w.finish.attempt,
            score: w.finish.score,
            passed: w.finish.passed,
            passing_score: w.finish.passingScore,
            content_hash: w.finish.contentHash,
            source: w.finish.source,
            locale: w.finish.locale,
            time_spent_seconds: w.passTime,
            started_at: w.finish.startedAt,
            completed_at: w.at,
            answers: w.answers,
          },
        ]
      : [],
  );
  const events = writes.flatMap((w) => w.events);
  const runOf = writes.flatMap((w) => w.events.map(() => w.id));
  const rows = await boundQuery<{ id: string }>(
    em,
    WRITE_BATCHES,
    [JSON.stringify(runs), outboxRecordset(events, (i) => runOf[i]), JSON.stringify(attempts)],
    { prepared: true },
  );
  const applied = new Set(rows.map((r) => r.id));
  return writes.map((w) => applied.has(w.id));
}

const WRITE_BATCHES = `with x as (
    select * from jsonb_to_recordset(?::jsonb) as x(id text, version text, time_spent int, pass_time int,
      last_screen_id text, progress numeric, answers jsonb, at timestamptz, batch_id text, response jsonb,
      finish boolean, score numeric, passed boolean, passing_score numeric, attempt int)),
  lk as (select c.id from completions c where c.id in (select id from x) for update skip locked),
  upd as (update completions c set time_spent_seconds = x.time_spent, pass_time_seconds = x.pass_time,
        last_screen_id = x.last_screen_id, progress_percent = x.progress, answers = x.answers,
        last_seen_at = x.at, last_event_at = x.at, ${RATE_SET},
        status = case when x.finish then 'completed' else c.status end,
        score = case when x.finish then x.score else c.score end,
        passed_at_completion = case when x.finish then x.passed else c.passed_at_completion end,
        passing_score_at_completion = case when x.finish then x.passing_score else c.passing_score_at_completion end,
        attempt = case when x.finish then x.attempt else c.attempt end,
        completed_at = case when x.finish then x.at else c.completed_at end
      from x join lk using (id) where c.id = x.id and c.xmin::text = x.version returning c.id),
  b as (insert into completion_batches (completion_id, batch_id, created_at, response)
      select x.id, x.batch_id, x.at, x.response from x join upd using (id) returning 1),
  ev as (insert into outbox_events (id, workspace_id, type, data, created_at) ${OUTBOX_KEYED_RECORDSET}
      where x.key in (select id from upd) returning 1),
  att as (insert into attempts (id, workspace_id, completion_id, course_id, identity_id, attempt, score, passed,
        passing_score, content_hash, source, locale, time_spent_seconds, started_at, completed_at, answers)
      select a.* from jsonb_to_recordset(?::jsonb) as a(id text, workspace_id text, completion_id text,
        course_id text, identity_id text, attempt int, score numeric, passed boolean, passing_score numeric,
        content_hash text, source text, locale text, time_spent_seconds int, started_at timestamptz,
        completed_at timestamptz, answers jsonb)
      where a.completion_id in (select id from upd) returning 1)
  select id from upd`;

/**
 * POST /player/v1/runs/:id/retake: a new pass over a finished run. Answers and position clear; the row keeps
 * `completed` and its last result until the next finish (attempt + 1). Retaking again before that finish
 * restarts the same pass (so a retried call changes nothing more); a run never finished is a 409.
 */
export async function retakeRun(ports: IngestPorts, ref: RunRef, now = new Date()): Promise<RunStateDto> {
  return ports.em.transactional(async (tx) => {
    const row = await lockRun(tx, ports, ref);
    if (row.attempt === null)
      throw new AppError('conflict', 'Nothing to retake: this run has not been finished yet');
    const [r] = await boundQuery<{
      status: 'in_progress' | 'completed';
      attempt: number;
      progress_percent: string;
      last_screen_id: null;
    }>(
      tx,
      `update completions set answers = '{}'::jsonb, last_screen_id = null, progress_percent = 0, pass = attempt + 1,
              pass_started_at = ?, pass_time_seconds = 0, last_seen_at = ?, last_event_at = ?
        where id = ? returning status, attempt, progress_percent, last_screen_id`,
      [now, now, now, row.id],
    );
    return stateOf(r);
  });
}
