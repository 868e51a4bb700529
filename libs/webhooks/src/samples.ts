/**
 * Sample events for `POST /webhooks/:id/test`: realistic payloads of every type, so a subscriber can exercise the
 * same parsing code it runs for real events. Ids are recognisably fake (`…_sample`).
 */
import type { EventPayload, EventType } from '@lectern/contracts';

export function samplePayload<T extends EventType>(type: T, publicUrl: string): EventPayload<T> {
  const base = publicUrl.replace(/\/+$/, '');
  const course = { id: 'crs_sample', title: 'Sample course' };
  const identity = {
    id: 'idn_sample',
    externalId: 'learner-sample',
    name: 'Sample Learner',
    email: 'learner@example.com',
  };
  const now = new Date().toISOString();
  const samples: { [K in EventType]: EventPayload<K> } = {
    'course.viewed': { course, identity },
    'course.progress': {
      course: { ...course, totalScreens: 4 },
      screen: { id: 'scr_sample', title: 'Second screen', index: 1 },
      percent: 50,
      identity,
    },
    'course.answered': {
      course,
      screen: { id: 'scr_sample', title: 'Quiz' },
      block: { id: 'blk_sample', type: 'quiz_single_choice' },
      correct: true,
      identity,
    },
    'course.completed': {
      course: { ...course, contentHash: 'sha256:sample' },
      identity,
      completionId: 'cmp_sample',
      attempt: 1,
      source: 'embed',
      score: { correct: 3, total: 4, percent: 75 },
      passed: true,
      passingScore: 70,
      answers: [
        { blockId: 'blk_sample', correct: true },
        { blockId: 'blk_sample_2', correct: false },
      ],
      startedAt: new Date(Date.now() - 600_000).toISOString(),
      completedAt: now,
      timeSpentSeconds: 600,
    },
    'course.published': { course, embedUrl: `${base}/embed/${course.id}` },
    'course.unpublished': { course, embedUrl: `${base}/embed/${course.id}` },
    'certificate.issued': {
      course,
      identity,
      serial: 'SAMPLE-0000-0000',
      verifyUrl: `${base}/verify/SAMPLE-0000-0000`,
      score: 75,
      issuedAt: now,
    },
    'identity.created': { identity },
  };
  return samples[type];
}
