import { expect } from 'chai';
import { z } from 'zod';
import {
  BLOCK_TYPES,
  BlockFields,
  applyTranslation,
  contentHash,
  stripAnswerKeys,
  type Screen,
} from '@lectern/courses';
import {
  LINK_FIELDS,
  MEDIA_FIELDS,
  MEDIA_ITEMS,
  buildLearnerCourse,
  mediaRefs,
  servedAsStored,
  type LearnerCourseSource,
  type LearnerTheme,
  type MediaRef,
  type StoredCourse,
} from '@lectern/learner-runs';
import { allTypesScreens, clone, VALID_BLOCKS } from '../courses/fixtures.js';

const SECRET = 'answer-key-secret';

const theme: LearnerTheme = {
  id: 'thm_1',
  name: 'Calm',
  tokens: { concept: 'calm', logoUrl: 'media://img/logo.png' },
  customFonts: [{ family: 'Brand Sans', url: 'media://font/brand.woff2', weight: 700 }],
};

const course = (over: Partial<StoredCourse> = {}): StoredCourse => ({
  id: 'crs_1',
  title: 'Fire safety',
  screens: allTypesScreens(),
  direction: 'ltr',
  locale: 'en',
  passingScore: 70,
  quizFeedback: 'immediate',
  navigation: 'default',
  ...over,
});

/** The same course with only its media blocks, every media field filled. */
function mediaScreens(): Screen[] {
  return [
    {
      id: 's',
      title: 'S',
      blocks: [
        { id: 'a', type: 'image', url: 'https://h/a.png', caption: 'keep' },
        { id: 'b', type: 'video', url: 'https://h/v.mp4', poster: 'https://h/p.png' },
        { id: 'c', type: 'audio', url: 'https://h/a.mp3' },
        { id: 'd', type: 'video_chapters', url: 'media://vid/2' },
        { id: 'e', type: 'hotspot', image: 'https://h/h.png', showSpots: true, spots: [] },
        { id: 'f', type: 'slideshow', slides: [{ id: 'x', image: 'https://h/s.png' }, { id: 'y' }] },
        { id: 'g', type: 'button', action: 'url', url: 'https://h/go' },
        { id: 'h', type: 'resource', url: 'media://doc/1', kind: 'document' },
        { id: 'i', type: 'embed', url: 'https://h/page' },
        { id: 'j', type: 'image', url: 'media://img/1' },
        { id: 'k', type: 'slideshow' },
      ],
    },
  ];
}

const source = (over: Partial<LearnerCourseSource> = {}): LearnerCourseSource => ({
  course: course(),
  translation: null,
  theme,
  ...over,
});

/** Every key anywhere inside `value`. */
function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, out);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysOf(v, out);
    }
  return out;
}

describe('learner runs: the learner-course builder', () => {
  it('the learner view is what the Player API and the preview served: same fields, same screens, same hash', async () => {
    const stored = course();
    const built = await buildLearnerCourse(source({ course: stored }), { answerKeys: { secret: SECRET } });
    expect(built).to.deep.equal({
      id: 'crs_1',
      title: 'Fire safety',
      direction: 'ltr',
      locale: 'en',
      quizFeedback: 'immediate',
      navigation: 'default',
      completion: 'free',
      passingScore: 70,
      contentHash: contentHash({
        title: 'Fire safety',
        screens: allTypesScreens(),
        direction: 'ltr',
        locale: 'en',
      }),
      theme,
      screens: stripAnswerKeys(allTypesScreens(), { secret: SECRET }),
    });
    // A course without fonts of its own sends no key: absent, not empty.
    expect(built).not.to.have.property('customFonts');
    // The preview reads them, and serves them as stored.
    const fonts = [{ family: 'Serif Pro', url: 'https://fonts.example/s.woff2' }];
    const preview = await buildLearnerCourse(source({ course: course({ customFonts: fonts }) }), {
      answerKeys: { secret: SECRET },
    });
    expect(preview.customFonts).to.deep.equal(fonts);
    expect({ ...preview, customFonts: undefined }).to.deep.equal({ ...built, customFonts: undefined });
  });

  it('a translation: its title and screens, its locale, the hash of the translated material', async () => {
    const screens = [{ id: 's1', title: 'One', blocks: [{ id: 't1', type: 'text', text: 'Hello' }] }];
    const content = { title: 'Un', 's:s1.title': 'Une', 's:s1.b:t1.text': 'Bonjour' };
    const built = await buildLearnerCourse(
      source({ course: course({ screens }), translation: { locale: 'fr', content } }),
      { answerKeys: { secret: SECRET } },
    );
    const translated = applyTranslation({ title: 'Fire safety', screens }, content);
    expect(built.title).to.equal('Un');
    expect(built.locale).to.equal('fr');
    expect(built.screens).to.deep.equal([
      { id: 's1', title: 'Une', blocks: [{ id: 't1', type: 'text', text: 'Bonjour' }] },
    ]);
    expect(built.contentHash).to.equal(contentHash({ ...translated, direction: 'ltr', locale: 'fr' }));
  });

  it("a translation reads in its locale's direction; the source in the course's", async () => {
    const build = (over: Partial<StoredCourse>, locale: string | null) =>
      buildLearnerCourse(
        source({ course: course(over), translation: locale ? { locale, content: {} } : null }),
        { answerKeys: { secret: SECRET } },
      );
    expect((await build({}, 'ar')).direction).to.equal('rtl');
    expect((await build({}, 'az-Arab')).direction).to.equal('rtl');
    expect((await build({}, null)).direction).to.equal('ltr');
    expect((await build({ direction: 'rtl', locale: 'he' }, 'fr')).direction).to.equal('ltr');
    expect((await build({ direction: 'rtl', locale: 'he' }, null)).direction).to.equal('rtl');
  });

  it('no answer key, explanation or instructor note reaches the learner view, whatever the block', async () => {
    const built = await buildLearnerCourse(source(), { answerKeys: { secret: SECRET } });
    const keys = keysOf(built.screens);
    for (const k of ['correct', 'explanation', 'answers', 'caseSensitive', 'pairs', 'outcome'])
      expect(keys.has(k), k).to.equal(false);
    const types = built.screens.flatMap((s) => s.blocks.map((b) => b.type));
    expect(types).not.to.include('instructor_note');
    expect(JSON.stringify(built)).not.to.include(VALID_BLOCKS.instructor_note.text as string);
  });

  it('kept answer keys (a SCORM package): the stored blocks minus instructor notes, unknown fields left out', async () => {
    const screens = allTypesScreens();
    const withUnknown = clone(screens);
    withUnknown[0].blocks[0] = { ...withUnknown[0].blocks[0], draftNote: 'not for learners' };
    const built = await buildLearnerCourse(source({ course: course({ screens: withUnknown }) }), {
      answerKeys: 'kept',
    });
    expect(built.screens).to.deep.equal(
      screens.map((s) => ({
        id: s.id,
        title: s.title,
        blocks: s.blocks.filter((b) => b.type !== 'instructor_note'),
      })),
    );
    // The same material, so the same fingerprint as the learner view's.
    const view = await buildLearnerCourse(source(), { answerKeys: { secret: SECRET } });
    expect(built.contentHash).to.equal(view.contentHash);
  });

  it('the theme is served as id, name, tokens and fonts, nothing else of the record read', async () => {
    const record = { ...theme, workspaceId: 'ws_1', createdAt: '2026-01-01T00:00:00.000Z' };
    const built = await buildLearnerCourse(source({ theme: record }), { answerKeys: 'kept' });
    expect(built.theme).to.deep.equal(theme);
    expect((await buildLearnerCourse(source({ theme: null }), { answerKeys: 'kept' })).theme).to.equal(null);
  });

  it('every media reference goes through the resolver, once, in order; links do not', async () => {
    const fonts = [{ family: 'Serif Pro', url: 'media://font/serif.woff2' }];
    const seen: string[] = [];
    const built = await buildLearnerCourse(
      source({ course: course({ screens: mediaScreens(), customFonts: fonts }) }),
      {
        answerKeys: { secret: SECRET },
        mediaUrl: (ref: MediaRef) => {
          seen.push(`${ref.use} ${ref.url}`);
          return `signed:${ref.url}`;
        },
      },
    );
    expect(seen).to.deep.equal([
      'font media://font/serif.woff2',
      'font media://font/brand.woff2',
      'image https://h/a.png',
      'playable https://h/v.mp4',
      'image https://h/p.png',
      'playable https://h/a.mp3',
      'playable media://vid/2',
      'image https://h/h.png',
      'image https://h/s.png',
      'file media://doc/1',
      'image media://img/1',
      'image media://img/logo.png',
    ]);
    const b = Object.fromEntries(built.screens[0].blocks.map((x) => [x.id, x]));
    expect(b.a).to.deep.equal({ id: 'a', type: 'image', url: 'signed:https://h/a.png', caption: 'keep' });
    expect(b.b).to.include({ url: 'signed:https://h/v.mp4', poster: 'signed:https://h/p.png' });
    expect(b.f.slides).to.deep.equal([{ id: 'x', image: 'signed:https://h/s.png' }, { id: 'y' }]);
    expect(b.g.url).to.equal('https://h/go');
    expect(b.i.url).to.equal('https://h/page');
    expect(built.customFonts).to.deep.equal([
      { family: 'Serif Pro', url: 'signed:media://font/serif.woff2' },
    ]);
    expect(built.theme?.tokens).to.deep.equal({ concept: 'calm', logoUrl: 'signed:media://img/logo.png' });
    expect(built.theme?.customFonts).to.deep.equal([
      { family: 'Brand Sans', url: 'signed:media://font/brand.woff2', weight: 700 },
    ]);
    // mediaRefs lists what the resolver is handed, in the same order.
    expect(mediaRefs(built).map((r) => r.use)).to.deep.equal(seen.map((s) => s.split(' ')[0]));
  });

  it('a resolver’s variants, size and placeholder sit beside each image field; what resolves nowhere is null and unavailable; authors cannot set either', async () => {
    const extras = {
      srcset: 'v480 480w, v960 960w',
      width: 960,
      height: 540,
      placeholder: 'data:image/webp;base64,AA',
    };
    const screens: Screen[] = [
      {
        id: 's',
        title: 'S',
        blocks: [
          {
            id: 'a',
            type: 'image',
            url: 'media://ok',
            srcset: 'https://evil/x 1w',
            width: 1,
            unavailable: true,
          },
          { id: 'b', type: 'image', url: 'media://gone' },
          { id: 'c', type: 'video', url: 'media://ok-video', poster: 'media://gone' },
          { id: 'd', type: 'video', url: 'media://gone', poster: 'media://ok' },
          {
            id: 'e',
            type: 'slideshow',
            slides: [{ image: 'media://ok', placeholder: 'x' }, { image: 'media://gone' }],
          },
          { id: 'f', type: 'audio', url: 'media://ok-audio' },
        ] as Screen['blocks'],
      },
    ];
    const built = await buildLearnerCourse(source({ course: course({ screens }) }), {
      answerKeys: { secret: SECRET },
      mediaUrl: (ref: MediaRef) => {
        if (ref.url === 'media://gone') return { url: null };
        // A playable field is handed no image fields even when the resolver answers some.
        return { url: `signed:${ref.url}`, ...extras };
      },
    });
    const b = Object.fromEntries(built.screens[0].blocks.map((x) => [x.id, x]));
    expect(b.a).to.deep.equal({ id: 'a', type: 'image', url: 'signed:media://ok', ...extras });
    expect(b.b).to.deep.equal({ id: 'b', type: 'image', url: null, unavailable: true });
    // A poster that resolves nowhere is left out; the video plays without it.
    expect(b.c).to.deep.equal({ id: 'c', type: 'video', url: 'signed:media://ok-video' });
    expect(b.d).to.deep.equal({
      id: 'd',
      type: 'video',
      url: null,
      unavailable: true,
      poster: 'signed:media://ok',
      ...extras,
    });
    expect(b.e.slides).to.deep.equal([
      { image: 'signed:media://ok', ...extras },
      { image: null, unavailable: true },
    ]);
    expect(b.f).to.deep.equal({ id: 'f', type: 'audio', url: 'signed:media://ok-audio' });
    // A logo that resolves nowhere is left out of the tokens.
    const gone = await buildLearnerCourse(source({ course: course({ screens: [] }) }), {
      answerKeys: { secret: SECRET },
      mediaUrl: (ref: MediaRef) => (ref.use === 'image' ? { url: null } : ref.url),
    });
    expect(gone.theme?.tokens).to.deep.equal({ concept: 'calm' });
  });

  it('a video with no poster of its own is asked for its poster frame and gets it with the frame size; an author’s poster wins', async () => {
    const screens: Screen[] = [
      {
        id: 's',
        title: 'S',
        blocks: [
          { id: 'a', type: 'video', url: 'media://vid', width: 1, height: 1 },
          { id: 'b', type: 'video', url: 'media://vid', poster: 'https://h/p.png' },
          { id: 'c', type: 'video', url: 'media://vid', poster: 'media://gone' },
          { id: 'd', type: 'video', url: 'media://gone' },
          { id: 'e', type: 'video', url: 'media://unprocessed' },
          { id: 'f', type: 'audio', url: 'media://vid' },
          { id: 'g', type: 'video_chapters', url: 'media://vid' },
        ] as Screen['blocks'],
      },
    ];
    const asked: string[] = [];
    const built = await buildLearnerCourse(source({ course: course({ screens }) }), {
      answerKeys: { secret: SECRET },
      mediaUrl: (ref: MediaRef) => {
        if (ref.wantsPoster) asked.push(ref.url);
        if (ref.url === 'media://gone') return { url: null };
        if (ref.url === 'media://unprocessed') return { url: 'signed:unprocessed' };
        // What a signer answers for a processed video, whether or not the block asked for the frame.
        if (ref.use === 'playable')
          return { url: `signed:${ref.url}`, poster: 'signed:frame', width: 320, height: 240 };
        return `signed:${ref.url}`;
      },
    });
    expect(asked).to.deep.equal(['media://vid', 'media://gone', 'media://unprocessed']);
    const b = Object.fromEntries(built.screens[0].blocks.map((x) => [x.id, x]));
    expect(b.a).to.deep.equal({
      id: 'a',
      type: 'video',
      url: 'signed:media://vid',
      poster: 'signed:frame',
      width: 320,
      height: 240,
    });
    expect(b.b).to.deep.equal({
      id: 'b',
      type: 'video',
      url: 'signed:media://vid',
      poster: 'signed:https://h/p.png',
    });
    // An author's poster that resolves nowhere is left out, not replaced by the frame.
    expect(b.c).to.deep.equal({ id: 'c', type: 'video', url: 'signed:media://vid' });
    expect(b.d).to.deep.equal({ id: 'd', type: 'video', url: null, unavailable: true });
    expect(b.e).to.deep.equal({ id: 'e', type: 'video', url: 'signed:unprocessed' });
    expect(b.f).to.deep.equal({ id: 'f', type: 'audio', url: 'signed:media://vid' });
    expect(b.g).to.deep.equal({ id: 'g', type: 'video_chapters', url: 'signed:media://vid' });
    // mediaRefs says which references ask (the SCORM export packs those frames).
    const plain = await buildLearnerCourse(source({ course: course({ screens }) }), { answerKeys: 'kept' });
    expect(mediaRefs(plain).flatMap((r) => (r.wantsPoster ? [r.url] : []))).to.deep.equal(asked);
  });

  it('an asynchronous resolver (a signer) works the same; a failing one fails the build', async () => {
    const built = await buildLearnerCourse(source({ course: course({ screens: mediaScreens() }) }), {
      answerKeys: 'kept',
      mediaUrl: async (ref) => `${ref.url}?sig=1`,
    });
    expect(mediaRefs(built).every((r) => r.url.endsWith('?sig=1'))).to.equal(true);
    let caught: unknown = null;
    await buildLearnerCourse(source({ course: course({ screens: mediaScreens() }) }), {
      answerKeys: 'kept',
      mediaUrl: () => Promise.reject(new Error('no signing key')),
    }).catch((err: unknown) => (caught = err));
    expect((caught as Error | null)?.message).to.equal('no signing key');
  });

  it('without a resolver every reference is served as stored, and a cached view is never changed by one', async () => {
    const versioned = source({ course: course({ screens: mediaScreens(), version: 'v1' }) });
    const plain = await buildLearnerCourse(versioned, { answerKeys: { secret: SECRET } });
    const asStored = await buildLearnerCourse(versioned, {
      answerKeys: { secret: SECRET },
      mediaUrl: servedAsStored,
    });
    expect(asStored).to.deep.equal(plain);
    expect(mediaRefs(plain).map((r) => r.url)).to.include.members(['https://h/a.png', 'media://doc/1']);
    const before = JSON.stringify(plain);
    const signed = await buildLearnerCourse(versioned, {
      answerKeys: { secret: SECRET },
      mediaUrl: (ref) => `signed:${ref.url}`,
    });
    expect(mediaRefs(signed).every((r) => r.url.startsWith('signed:'))).to.equal(true);
    // The second open of the same version is served from the cache: still unsigned.
    const again = await buildLearnerCourse(versioned, { answerKeys: { secret: SECRET } });
    expect(JSON.stringify(again)).to.equal(before);
    expect(JSON.stringify(plain)).to.equal(before);
  });

  it('every URL-like field of the block schemas is either a media field or a listed link', () => {
    const URL_LIKE = /url|image|poster|src(?!lang)|logo|file/i;
    const found: string[] = [];
    const walk = (schema: z.core.$ZodType, path: string) => {
      if (schema instanceof z.ZodOptional) return walk(schema.unwrap(), path);
      if (schema instanceof z.ZodArray) return walk(schema.element, `${path}[]`);
      if (schema instanceof z.ZodObject)
        for (const [key, sub] of Object.entries(schema.shape)) {
          if (URL_LIKE.test(key) && !(sub instanceof z.ZodObject)) found.push(`${path}.${key}`);
          walk(sub, `${path}.${key}`);
        }
    };
    for (const type of BLOCK_TYPES) walk(BlockFields[type], type);
    const classified = [
      ...Object.entries(MEDIA_FIELDS).flatMap(([type, fields]) => fields.map((f) => `${type}.${f.field}`)),
      ...Object.entries(MEDIA_ITEMS).flatMap(([type, items]) =>
        items.map((i) => `${type}.${i.list}[].${i.field}`),
      ),
      ...Object.entries(LINK_FIELDS).flatMap(([type, fields]) => fields.map((f) => `${type}.${f}`)),
    ];
    expect(found).to.include.members(['image.url', 'video.poster', 'slideshow.slides[].image', 'button.url']);
    expect([...found].sort()).to.deep.equal([...classified].sort());
  });
});
