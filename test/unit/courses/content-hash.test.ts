import { expect } from 'chai';
import { canonicalJson, contentHash, type Screen } from '@lectern/courses';
import { allTypesScreens, clone, VALID_BLOCKS } from './fixtures.js';

const course = () => ({ title: 'Fire safety', direction: 'ltr', locale: 'en', screens: allTypesScreens() });
const hashOf = (c: ReturnType<typeof course>) => contentHash(c);

/** The same JSON with every object's keys in reverse order. */
function reverseKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reverseKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reverseKeys(x)]),
    );
  }
  return v;
}

describe('courses: contentHash', () => {
  it('is sha256 hex with a prefix, and stable', () => {
    const h = hashOf(course());
    expect(h).to.match(/^sha256:[0-9a-f]{64}$/);
    expect(hashOf(course())).to.equal(h);
  });

  it('does not depend on key order at any depth', () => {
    const c = course();
    const reordered = reverseKeys(c) as ReturnType<typeof course>;
    expect(JSON.stringify(reordered)).not.to.equal(JSON.stringify(c));
    expect(hashOf(reordered)).to.equal(hashOf(c));
  });

  it('canonical JSON sorts keys and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }, 'x'], e: null })).to.equal(
      '{"a":[{"d":2},"x"],"b":1,"e":null}',
    );
  });

  const changes: [string, (c: ReturnType<typeof course>) => void][] = [
    ['the course title', (c) => (c.title = 'Fire safety 2')],
    ['the direction', (c) => (c.direction = 'rtl')],
    ['the locale', (c) => (c.locale = 'fr')],
    ['a screen title', (c) => (c.screens[1].title = 'Quiz!')],
    ['a screen id', (c) => (c.screens[1].id = 's-quiz-2')],
    ['the order of screens', (c) => c.screens.reverse()],
    ['the order of blocks', (c) => c.screens[0].blocks.reverse()],
    ['a block text', (c) => (c.screens[0].blocks[1].text = 'Different')],
    ['a block id', (c) => (c.screens[0].blocks[1].id = 'text-2')],
    ['an option text', (c) => ((c.screens[1].blocks[0].options as { text: string }[])[0].text = 'O2')],
    [
      'the correct answer',
      (c) => ((c.screens[1].blocks[0].options as { correct: boolean }[])[1].correct = true),
    ],
    ['the order of options', (c) => (c.screens[1].blocks[0].options as unknown[]).reverse()],
    ['a known field that was missing', (c) => (c.screens[0].blocks[3].transcript = 'Now with a transcript')],
    ['a removed block', (c) => c.screens[0].blocks.pop()],
    ['an added screen', (c) => c.screens.push({ id: 's-new', title: 'New', blocks: [] })],
    ['a heading level', (c) => (c.screens[0].blocks[0].level = 2)],
  ];
  for (const [what, change] of changes) {
    it(`changes with ${what}`, () => {
      const c = course();
      change(c);
      expect(hashOf(c)).not.to.equal(hashOf(course()));
    });
  }

  const nonChanges: [string, (c: ReturnType<typeof course>) => void][] = [
    ['an unknown block field', (c) => (c.screens[0].blocks[1].txet = 'typo')],
    [
      'an unknown item field',
      (c) => ((c.screens[1].blocks[0].options as Record<string, unknown>[])[0].hint = 'h'),
    ],
    ['an unknown screen field', (c) => ((c.screens[0] as Screen).colour = 'red')],
    [
      'an instructor note',
      (c) =>
        c.screens[2].blocks.filter((b) => b.type === 'instructor_note').forEach((b) => (b.text = 'Other')),
    ],
    ['a copy', (c) => (c.screens = clone(c.screens))],
  ];
  for (const [what, change] of nonChanges) {
    it(`does not change with ${what}`, () => {
      const c = course();
      change(c);
      expect(hashOf(c)).to.equal(hashOf(course()));
    });
  }

  it('treats a missing direction and locale as ltr and en', () => {
    const c = course();
    expect(contentHash({ title: c.title, screens: c.screens })).to.equal(hashOf(c));
  });

  it('does not throw on garbage screens', () => {
    expect(contentHash({ title: 't', screens: 'x' })).to.equal(contentHash({ title: 't', screens: [] }));
    expect(
      contentHash({ title: 't', screens: [null, { id: 's', title: 'x', blocks: [VALID_BLOCKS.text, 3] }] }),
    ).to.match(/^sha256:/);
  });
});
