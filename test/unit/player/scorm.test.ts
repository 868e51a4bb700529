import { expect } from 'chai';
import { unkeyedItemId } from '@lectern/grading';
import {
  SUSPEND_LIMIT,
  ScormSession,
  decodeSuspend,
  duration2004,
  encodeSuspend,
  findLmsApi,
  interactionFor,
  timespan12,
  type FrameLike,
  type PlayerCourse,
  type Scorm12Api,
  type Scorm2004Api,
  type ScormSnapshot,
} from '@lectern/player';

/** A stand-in for the LMS's API object: it stores what the SCO sets and counts every call. */
class FakeLms {
  values: Record<string, string> = {};
  calls: string[] = [];
  constructor(initial: Record<string, string> = {}) {
    this.values = { ...initial };
  }
  as12(): Scorm12Api {
    return {
      LMSInitialize: () => this.call('init'),
      LMSFinish: () => this.call('finish'),
      LMSGetValue: (k) => this.values[k] ?? '',
      LMSSetValue: (k, v) => ((this.values[k] = v), this.call(`set ${k}`)),
      LMSCommit: () => this.call('commit'),
      LMSGetLastError: () => '0',
    };
  }
  as2004(): Scorm2004Api {
    return {
      Initialize: () => this.call('init'),
      Terminate: () => this.call('finish'),
      GetValue: (k) => this.values[k] ?? '',
      SetValue: (k, v) => ((this.values[k] = v), this.call(`set ${k}`)),
      Commit: () => this.call('commit'),
      GetLastError: () => '0',
    };
  }
  count(name: string): number {
    return this.calls.filter((c) => c === name).length;
  }
  private call(name: string): string {
    this.calls.push(name);
    return 'true';
  }
}

const snap = (over: Partial<ScormSnapshot> = {}): ScormSnapshot => ({
  screenId: 's1',
  suspendData: '[1,0]',
  finished: false,
  result: null,
  interactions: [],
  ...over,
});

describe('player: SCORM API discovery', () => {
  const api = new FakeLms().as12();
  const chain = (depth: number, top: Record<string, unknown>): FrameLike => {
    let win: FrameLike & Record<string, unknown> = { ...top };
    win.parent = win;
    for (let i = 0; i < depth; i++) {
      const child: FrameLike & Record<string, unknown> = { parent: win };
      win = child;
    }
    return win;
  };

  it('finds API in the window itself and up to seven parents', () => {
    expect(findLmsApi(chain(0, { API: api }), '1.2')).to.equal(api);
    expect(findLmsApi(chain(7, { API: api }), '1.2')).to.equal(api);
    expect(findLmsApi(chain(8, { API: api }), '1.2')).to.equal(null);
  });

  it('looks for API_1484_11 for 2004, not API', () => {
    expect(findLmsApi(chain(2, { API: api }), '2004')).to.equal(null);
    expect(findLmsApi(chain(2, { API_1484_11: api }), '2004')).to.equal(api);
  });

  it('then searches the opener and its parents', () => {
    const win: FrameLike = { opener: chain(3, { API: api }) };
    win.parent = win;
    expect(findLmsApi(win, '1.2')).to.equal(api);
  });

  it('a frame that throws on access (cross-origin) is skipped, not fatal', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('SecurityError');
        },
      },
    ) as FrameLike;
    const win: FrameLike = { parent: hostile, opener: chain(0, { API: api }) };
    expect(findLmsApi(win, '1.2')).to.equal(api);
    expect(findLmsApi({ parent: hostile }, '1.2')).to.equal(null);
  });
});

describe('player: SCORM session', () => {
  it('1.2: initializes once, reports location, suspend data, incomplete, suspend exit; commits when asked', () => {
    const lms = new FakeLms({ 'cmi.core.student_id': 'u-7', 'cmi.core.student_name': 'Doe, Ada' });
    let t = 1000;
    const sco = new ScormSession(lms.as12(), '1.2', () => t);
    const opened = sco.open();
    expect(opened?.learner).to.deep.equal({ id: 'u-7', name: 'Doe, Ada' });
    expect(sco.open()).to.equal(null);
    expect(lms.count('init')).to.equal(1);
    sco.report(snap(), true);
    expect(lms.values['cmi.core.lesson_location']).to.equal('s1');
    expect(lms.values['cmi.suspend_data']).to.equal('[1,0]');
    expect(lms.values['cmi.core.lesson_status']).to.equal('incomplete');
    expect(lms.values['cmi.core.exit']).to.equal('suspend');
    expect(lms.count('commit')).to.equal(1);
    sco.report(snap(), false);
    expect(lms.count('commit')).to.equal(1);
    t += 3_723_450;
    sco.report(snap({ screenId: 's3', finished: true, result: { percent: 66.67, passed: false } }), false);
    expect(lms.values['cmi.core.lesson_status']).to.equal('failed');
    expect(lms.values['cmi.core.score.raw']).to.equal('66.67');
    expect(lms.values['cmi.core.score.min']).to.equal('0');
    expect(lms.values['cmi.core.score.max']).to.equal('100');
    expect(lms.values['cmi.core.exit']).to.equal('');
    expect(lms.values['cmi.core.session_time']).to.equal('0001:02:03.45');
    expect(lms.count('commit')).to.equal(2);
    sco.close(snap({ screenId: 's3', finished: true, result: { percent: 66.67, passed: false } }));
    sco.close(snap());
    expect(lms.count('finish')).to.equal(1);
    sco.report(snap(), true);
    expect(lms.values['cmi.core.lesson_location']).to.equal('s3');
  });

  it('1.2: no passing score → completed; a pass → passed', () => {
    for (const [passed, status] of [
      [null, 'completed'],
      [true, 'passed'],
    ] as const) {
      const lms = new FakeLms();
      const sco = new ScormSession(lms.as12(), '1.2');
      sco.open();
      sco.report(snap({ finished: true, result: { percent: 100, passed } }), false);
      expect(lms.values['cmi.core.lesson_status']).to.equal(status);
    }
  });

  it('2004: completion, success, scaled score, ISO duration, interactions; resume reads entry and data', () => {
    const lms = new FakeLms({
      'cmi.learner_id': 'L1',
      'cmi.learner_name': 'Ada',
      'cmi.entry': 'resume',
      'cmi.suspend_data': '[1,2]',
      'cmi.location': 's3',
      'cmi.interactions._count': '1',
      'cmi.interactions.0.id': 'q1',
    });
    let t = 0;
    const sco = new ScormSession(lms.as2004(), '2004', () => t);
    expect(sco.open()).to.deep.equal({
      learner: { id: 'L1', name: 'Ada' },
      suspendData: '[1,2]',
      location: 's3',
      resumed: true,
    });
    t = 90_500;
    const interactions = [
      { id: 'q1', type: 'choice' as const, response: 'o2', correct: true },
      { id: 'q2', type: 'true-false' as const, response: 'false', correct: false },
    ];
    sco.report(snap({ interactions }), true);
    expect(lms.values['cmi.completion_status']).to.equal('incomplete');
    expect(lms.values['cmi.exit']).to.equal('suspend');
    expect(lms.values['cmi.interactions.0.learner_response']).to.equal('o2');
    expect(lms.values['cmi.interactions.0.result']).to.equal('correct');
    expect(lms.values['cmi.interactions.1.id']).to.equal('q2');
    expect(lms.values['cmi.interactions.1.type']).to.equal('true-false');
    expect(lms.values['cmi.interactions.1.result']).to.equal('incorrect');
    expect(lms.values['cmi.interactions.1.timestamp']).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\dZ$/);
    expect(lms.values['cmi.session_time']).to.equal('PT0H1M30.5S');
    sco.report(snap({ finished: true, result: { percent: 50, passed: true }, interactions }), false);
    expect(lms.values['cmi.completion_status']).to.equal('completed');
    expect(lms.values['cmi.success_status']).to.equal('passed');
    expect(lms.values['cmi.score.scaled']).to.equal('0.5');
    expect(lms.values['cmi.score.raw']).to.equal('50');
    expect(lms.values['cmi.exit']).to.equal('normal');
    const sets = lms.calls.filter((c) => c.startsWith('set cmi.interactions')).length;
    sco.report(snap({ finished: true, result: { percent: 50, passed: true }, interactions }), false);
    expect(lms.calls.filter((c) => c.startsWith('set cmi.interactions')).length).to.equal(sets);
  });

  it('a refused Initialize leaves the session closed: nothing is written, nothing terminated', () => {
    const lms = new FakeLms();
    const api = { ...lms.as12(), LMSInitialize: () => 'false' };
    const warnings: string[] = [];
    const sco = new ScormSession(api, '1.2', Date.now, (m) => warnings.push(m));
    expect(sco.open()).to.equal(null);
    sco.report(snap(), true);
    sco.close(snap());
    expect(lms.calls).to.deep.equal([]);
    expect(warnings).to.have.length(1);
  });

  it('an LMS that throws is survived', () => {
    const lms = new FakeLms();
    const api = {
      ...lms.as2004(),
      SetValue: () => {
        throw new Error('boom');
      },
    };
    const sco = new ScormSession(api, '2004', Date.now, () => undefined);
    sco.open();
    expect(() => sco.report(snap(), true)).not.to.throw();
    expect(() => sco.close(snap())).not.to.throw();
    expect(lms.count('finish')).to.equal(1);
  });

  it('time formats', () => {
    expect(timespan12(0)).to.equal('0000:00:00.00');
    expect(timespan12(59.999)).to.equal('0000:01:00.00');
    expect(duration2004(3600)).to.equal('PT1H0M0S');
    expect(duration2004(0.126)).to.equal('PT0H0M0.13S');
  });

  it('interactions take the SCORM type of the block, falling back to other', () => {
    expect(interactionFor({ id: 'b', type: 'quiz_multiple_choice' }, ['o1', 'o3'], true)).to.include({
      type: 'choice',
      response: 'o1[,]o3',
    });
    expect(interactionFor({ id: 'b', type: 'match' }, { p1: 'k_1', p2: 'k_2' }, false)).to.include({
      type: 'matching',
      response: 'p1[.]k_1[,]p2[.]k_2',
    });
    expect(interactionFor({ id: 'b', type: 'ranking' }, ['k_2', 'k_1'], false).type).to.equal('sequencing');
    expect(interactionFor({ id: 'b', type: 'fill_in_blank' }, ['Paris', 'Rome'], true)).to.include({
      type: 'fill-in',
      response: 'Paris[,]Rome',
    });
    expect(interactionFor({ id: 'b', type: 'hotspot' }, { x: 0.5, y: 0.25 }, true)).to.include({
      type: 'other',
      response: '{"x":0.5,"y":0.25}',
    });
    expect(interactionFor({ id: 'b', type: 'quiz_single_choice' }, 'has space', true).type).to.equal('other');
  });
});

/** A course of `n` screens, each with one block of every graded type plus a poll and a reflection. */
function bigCourse(n: number): PlayerCourse {
  const opts = (k: number) =>
    Array.from({ length: 5 }, (_, i) => ({ id: `o${i}`, text: `Option ${i}`, correct: i === k }));
  return {
    id: 'c1',
    title: 'Big',
    screens: Array.from({ length: n }, (_, s) => ({
      id: `s${s}`,
      title: `Screen ${s}`,
      blocks: [
        { id: `s${s}-sc`, type: 'quiz_single_choice', question: 'q', options: opts(1) },
        { id: `s${s}-mc`, type: 'quiz_multiple_choice', question: 'q', options: opts(2) },
        { id: `s${s}-tf`, type: 'quiz_true_false', statement: 's', correct: true },
        { id: `s${s}-fb`, type: 'fill_in_blank', text: '{{b1}}', blanks: [{ id: 'b1', answers: ['Paris'] }] },
        {
          id: `s${s}-ma`,
          type: 'match',
          pairs: [1, 2, 3, 4].map((i) => ({ id: `p${i}`, left: `L${i}`, right: `R${i}` })),
        },
        { id: `s${s}-ra`, type: 'ranking', items: [1, 2, 3, 4].map((i) => ({ id: `r${i}`, text: `I${i}` })) },
        {
          id: `s${s}-hs`,
          type: 'hotspot',
          image: 'x',
          spots: [{ id: 'h1', x: 0.5, y: 0.5, radius: 0.1, correct: true }],
        },
        {
          id: `s${s}-po`,
          type: 'poll',
          question: 'q',
          options: opts(0).map(({ id, text }) => ({ id, text })),
        },
        { id: `s${s}-re`, type: 'reflection', prompt: 'p' },
      ],
    })),
  };
}

function answersFor(course: PlayerCourse): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of course.screens)
    for (const b of s.blocks) {
      const id = b.id;
      const kind = id.slice(id.lastIndexOf('-') + 1);
      out[id] = {
        sc: 'o1',
        mc: ['o2', 'o4'],
        tf: false,
        fb: 'Paris',
        ma: Object.fromEntries([1, 2, 3, 4].map((i) => [`p${i}`, unkeyedItemId(id, `p${5 - i}`)])),
        ra: [4, 3, 2, 1].map((i) => unkeyedItemId(id, `r${i}`)),
        hs: { x: 0.51234567, y: 0.5 },
        po: 'o3',
        re: 'A thoughtful answer of some length, as a learner might write it in a reflection box.',
      }[kind];
    }
  return out;
}

describe('player: SCORM suspend_data', () => {
  it('round-trips position and every answer shape', () => {
    const course = bigCourse(2);
    const answers = answersFor(course);
    const { data, level } = encodeSuspend(course, { index: 1, answers }, SUSPEND_LIMIT['1.2'], unkeyedItemId);
    expect(level).to.equal('full');
    const back = decodeSuspend(course, data, unkeyedItemId);
    expect(back?.index).to.equal(1);
    expect(back?.answers).to.deep.equal({
      ...answers,
      's0-hs': { x: 0.5123, y: 0.5 },
      's1-hs': { x: 0.5123, y: 0.5 },
    });
  });

  it('keeps answers of an unexpected shape as they came', () => {
    const course = bigCourse(1);
    const answers = { 's0-sc': 'not-an-option', 's0-tf': 'yes', 's0-ma': [['p1', 'x']] };
    const { data } = encodeSuspend(course, { index: 0, answers }, 4096, unkeyedItemId);
    expect(decodeSuspend(course, data, unkeyedItemId)?.answers).to.deep.equal(answers);
  });

  it('ignores data that is not ours and clamps a position past the end', () => {
    const course = bigCourse(1);
    for (const junk of ['', 'abc', '{}', '[2,0]', '["1",0]'])
      expect(decodeSuspend(course, junk, unkeyedItemId)).to.equal(null);
    expect(decodeSuspend(course, '[1,9,0,1,999,1]', unkeyedItemId)).to.deep.equal({
      index: 0,
      answers: { 's0-sc': 'o1' },
    });
  });

  it('measured: sizes against the 1.2 limit, and the deliberate degradation when it overflows', () => {
    const sizes: Record<number, { chars: number; level: string }> = {};
    for (const n of [1, 10, 20, 30, 50, 100]) {
      const course = bigCourse(n);
      const full = encodeSuspend(
        course,
        { index: n - 1, answers: answersFor(course) },
        Infinity,
        unkeyedItemId,
      );
      const fitted = encodeSuspend(
        course,
        { index: n - 1, answers: answersFor(course) },
        4096,
        unkeyedItemId,
      );
      sizes[n] = { chars: full.data.length, level: fitted.level };
      expect(fitted.data.length).to.be.at.most(4096);
      const back = decodeSuspend(course, fitted.data, unkeyedItemId);
      expect(back?.index).to.equal(n - 1);
    }
    // Per screen of 7 graded + 2 ungraded blocks: about 200 characters with the reflection text, 90 without.
    expect(sizes[10].level).to.equal('full');
    expect(sizes[30].level).to.equal('graded');
    expect(sizes[100].level).to.equal('partial');
    console.log(`      suspend_data chars per course size: ${JSON.stringify(sizes)}`);
  });
});
