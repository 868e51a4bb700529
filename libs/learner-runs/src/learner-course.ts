import { directionOf, keyedScreens, stripAnswerKeys } from '@lectern/courses';
import type { CustomFont, PlayerCourseDto } from '@lectern/contracts';
import { VersionCache, materialOf, type Material, type ServedTranslation } from './served.js';

/**
 * The learner's copy of a course: what the player is handed by the Player API (`POST /player/v1/runs`), the
 * authors' preview and a SCORM package. Built here and nowhere else, so a rule about what a learner may see
 * (no answer keys, no instructor notes, only known fields) or about how a media reference is served holds for
 * all three at once (docs/player.md "Where a course comes from").
 */

/**
 * The course as the player consumes it (the Player API's `PlayerCourse`), plus the course's own fonts where
 * the caller serves them (the preview and SCORM packages; the Player API reads no fonts of the course).
 */
export type LearnerCourse = PlayerCourseDto & {
  customFonts?: CustomFont[];
  /** Only with the answer keys kept (a SCORM package builds its review in the browser): the author's setting. */
  review?: { showCorrectAnswers: boolean };
};
export type LearnerTheme = NonNullable<PlayerCourseDto['theme']>;
type LearnerScreens = PlayerCourseDto['screens'];

/** The stored course (answer keys included), in its source locale. */
export interface StoredCourse {
  id: string;
  title: string;
  /** As stored: validated on write, read defensively (malformed screens and blocks are left out). */
  screens: unknown;
  direction: 'ltr' | 'rtl';
  locale: string;
  passingScore: number | null;
  quizFeedback: 'deferred' | 'immediate';
  navigation: 'default' | 'hidden';
  /** Absent: `free` (docs/authoring.md "Completion rules"). */
  completion?: 'free' | 'sequential';
  /** The course's own fonts; when absent the learner copy has no `customFonts` field. */
  customFonts?: CustomFont[];
  /** The review after a finish (docs/player-api.md "Review"); a copy with the keys kept carries it. */
  review?: { showCorrectAnswers: boolean };
  /** Names this version of the course (content hash and `updated_at`): what is derived from it is cached by it. */
  version?: string;
}

/** What a media field holds, for the resolver: an image, a video or audio file, a downloadable file, a font. */
export type MediaUse = 'image' | 'playable' | 'file' | 'font';

export interface MediaRef {
  /** The reference as stored (SPEC.md "Media upload result": an identifier, not necessarily a fetchable URL). */
  url: string;
  use: MediaUse;
  /**
   * A video's file whose block has no poster of its own: the resolver may answer the poster frame processing made
   * of it (`ServedMedia.poster`) and its frame size. An author's poster always wins, so it is never asked then.
   */
  wantsPoster?: true;
}

/**
 * What a resolver may answer beside a plain address (docs/player-api.md "Media in the learner view"): `url` null
 * when the reference resolves nowhere (deleted, another workspace's, malformed); for an image with what its
 * processing found, the responsive variants (`srcset`: `<address> <width>w, …`), its size and its placeholder.
 */
export interface ServedMedia {
  url: string | null;
  srcset?: string;
  /** Pixels of an image; of a video's frame when it is served with its poster frame (`wantsPoster`). */
  width?: number;
  height?: number;
  /** Only for a ref that `wantsPoster`: the address of the video's processed poster frame. */
  poster?: string;
  /** A tiny image as a `data:` URL, shown until the image loads. */
  placeholder?: string;
}

/**
 * Turns a stored media reference into what the learner's browser loads (a signed URL; a file inside a SCORM
 * package). Called once per field, never for links that navigate or frame another page (`button.url`,
 * `embed.url`). Without one, every reference is served as stored (`servedAsStored`).
 */
export type MediaUrl = (ref: MediaRef) => string | ServedMedia | Promise<string | ServedMedia>;

/**
 * The fields the server sets beside an image field in the learner view (`ServedMedia` without `url`) and the mark
 * of a block or item whose media resolves nowhere. Never taken from what an author stored: they are removed from
 * every object that holds a media field before the resolver's answer is put in.
 */
export const SERVED_MEDIA_FIELDS = ['srcset', 'width', 'height', 'placeholder', 'unavailable'] as const;

/** The default resolver: the reference as stored. */
export const servedAsStored: MediaUrl = (ref) => ref.url;

export interface LearnerCourseOptions {
  /**
   * `{ secret }`: the learner view (`stripAnswerKeys`, item ids keyed by the secret): the server grades.
   * `'kept'`: the keys travel, for a SCORM package that grades in the browser (`keyedScreens`).
   */
  answerKeys: { secret: string } | 'kept';
  mediaUrl?: MediaUrl;
}

export interface LearnerCourseSource {
  course: StoredCourse;
  /** The translation served (already picked, `pickLocale`), or null for the source. */
  translation: ServedTranslation | null;
  theme: LearnerTheme | null;
}

const views = new VersionCache<{ material: Material; screens: LearnerScreens }>(32);

/**
 * The served material (`materialOf`) and its screens in the learner's copy, computed once per course version,
 * translation version and answer-key mode: every open of a published course serves the same screens until the
 * course or its translation is edited (which changes the key). Without versions nothing is cached. The cached
 * screens are shared: nothing below mutates them (the media pass copies what it changes).
 */
function screensOf(
  course: StoredCourse,
  translation: ServedTranslation | null,
  answerKeys: LearnerCourseOptions['answerKeys'],
): { material: Material; screens: LearnerScreens } {
  const versioned = course.version !== undefined && (!translation || translation.version !== undefined);
  const key = versioned
    ? [
        course.id,
        course.version,
        translation?.locale ?? '',
        translation?.version ?? '',
        answerKeys === 'kept' ? 'kept' : `secret:${answerKeys.secret}`,
      ].join('|')
    : null;
  const hit = key ? views.get(key) : undefined;
  if (hit) return hit;
  const material = materialOf(course, translation);
  const screens =
    answerKeys === 'kept'
      ? keyedScreens(material.screens)
      : stripAnswerKeys(material.screens, { secret: answerKeys.secret });
  const view = { material, screens };
  if (key) views.set(key, view);
  return view;
}

/**
 * The learner's copy of `source.course` in the served locale, with its theme, every media reference passed
 * through `options.mediaUrl`. Pure but for what the resolver does.
 */
export async function buildLearnerCourse(
  source: LearnerCourseSource,
  options: LearnerCourseOptions,
): Promise<LearnerCourse> {
  const { course, translation, theme } = source;
  const { material, screens } = screensOf(course, translation, options.answerKeys);
  const built: LearnerCourse = {
    id: course.id,
    title: material.title,
    // A translation reads in its own locale's direction (an Arabic translation of an English course is rtl).
    direction: translation ? directionOf(translation.locale) : course.direction,
    locale: material.locale,
    quizFeedback: course.quizFeedback,
    navigation: course.navigation,
    completion: course.completion ?? 'free',
    passingScore: course.passingScore,
    contentHash: material.contentHash,
    theme: theme && learnerTheme(theme),
    screens,
    ...(course.customFonts ? { customFonts: course.customFonts } : {}),
    ...(options.answerKeys === 'kept' && course.review ? { review: course.review } : {}),
  };
  // Served as stored needs no pass: the hot path (every run open) copies nothing.
  return options.mediaUrl ? resolveMedia(built, options.mediaUrl) : built;
}

/** The theme as served: its id, name, tokens and fonts, nothing else of the record a caller read. */
function learnerTheme(theme: LearnerTheme): LearnerTheme {
  return { id: theme.id, name: theme.name, tokens: theme.tokens, customFonts: theme.customFonts };
}

/** Every media reference of a learner copy, in the order `buildLearnerCourse` resolves them. */
export function mediaRefs(course: LearnerCourse): MediaRef[] {
  const refs: MediaRef[] = [];
  mapMedia(course, (ref) => {
    refs.push(ref);
    return ref.url;
  });
  return refs;
}

async function resolveMedia(course: LearnerCourse, mediaUrl: MediaUrl): Promise<LearnerCourse> {
  // Two passes: the references are resolved together (a signer may be asynchronous), then put in place.
  const refs = mediaRefs(course);
  const resolved = await Promise.all(refs.map((ref) => mediaUrl(ref)));
  let i = 0;
  return mapMedia(course, () => resolved[i++]!);
}

/**
 * The block fields that hold media the player loads or offers for download. Fields that navigate or frame
 * another page (`button.url`, `embed.url`) are links, not media: they stay as they are. A new URL field in the
 * block schemas (libs/contracts) must be listed here or there (test/unit/learner-runs/learner-course.test.ts).
 */
export const MEDIA_FIELDS: Readonly<
  Record<string, readonly { field: string; use: MediaUse; optional?: true; poster?: string }[]>
> = {
  image: [{ field: 'url', use: 'image' }],
  video: [
    // Without a poster of the author's, the processed frame of the file is the poster (docs/media.md "Serving").
    { field: 'url', use: 'playable', poster: 'poster' },
    // A poster that resolves nowhere is left out: the video shows without one.
    { field: 'poster', use: 'image', optional: true },
  ],
  audio: [{ field: 'url', use: 'playable' }],
  video_chapters: [{ field: 'url', use: 'playable' }],
  hotspot: [{ field: 'image', use: 'image' }],
  resource: [{ field: 'url', use: 'file' }],
};
/** Lists of items whose fields are media: `slideshow.slides[].image`, `video.tracks[].src`. */
export const MEDIA_ITEMS: Readonly<
  Record<string, readonly { list: string; field: string; use: MediaUse }[]>
> = {
  slideshow: [{ list: 'slides', field: 'image', use: 'image' }],
  // A caption file is fetched by the player, not packed: https only (docs/blocks.md "video").
  video: [{ list: 'tracks', field: 'src', use: 'file' }],
};
/** URL fields of the block schemas that are links, not media. */
export const LINK_FIELDS: Readonly<Record<string, readonly string[]>> = {
  embed: ['url'],
  button: ['url'],
};

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Puts a resolver's answer for `field` into `obj` (a block or a list item, already copied of the author's served
 * fields): the address, and for an image its `srcset`, `width`, `height` and `placeholder`; a reference that
 * resolves nowhere becomes `null` with `unavailable: true` on the object, or is left out when the field is
 * optional (a video's poster). A poster frame answered for a video goes into `posterField` with the frame's size.
 */
function putServed(
  obj: Rec,
  field: string,
  use: MediaUse,
  served: string | ServedMedia,
  optional: boolean,
  posterField?: string,
): Rec {
  if (typeof served === 'string') return { ...obj, [field]: served };
  if (served.url === null) {
    if (optional) {
      const { [field]: _dropped, ...rest } = obj;
      return rest;
    }
    return { ...obj, [field]: null, unavailable: true };
  }
  const out: Rec = { ...obj, [field]: served.url };
  if (use === 'image') {
    if (served.srcset) out.srcset = served.srcset;
    if (served.width) out.width = served.width;
    if (served.height) out.height = served.height;
    if (served.placeholder) out.placeholder = served.placeholder;
  } else if (posterField !== undefined && served.poster) {
    out[posterField] = served.poster;
    if (served.width && served.height) {
      out.width = served.width;
      out.height = served.height;
    }
  }
  return out;
}

/** `obj` without the fields only the server sets (`SERVED_MEDIA_FIELDS`), copied only when it has one. */
function withoutServed(obj: Rec): Rec {
  if (!SERVED_MEDIA_FIELDS.some((k) => k in obj)) return obj;
  const out = { ...obj };
  for (const k of SERVED_MEDIA_FIELDS) delete out[k];
  return out;
}

/**
 * A copy of `course` with every media reference passed through `swap`, in a fixed order: the course's fonts,
 * the theme's fonts, the blocks' media in reading order, the theme's logo. Only what changes is copied. Each
 * block or item holds at most one image field, so the served fields beside it are unambiguous (a video's frame
 * size is put only when it has no poster, its one image field).
 */
function mapMedia(course: LearnerCourse, swap: (ref: MediaRef) => string | ServedMedia): LearnerCourse {
  const urlOf = (served: string | ServedMedia, stored: string) =>
    typeof served === 'string' ? served : (served.url ?? stored);
  const fonts = (list: CustomFont[]) =>
    list.map((f) => ({ ...f, url: urlOf(swap({ url: f.url, use: 'font' }), f.url) }));
  const customFonts = course.customFonts ? fonts(course.customFonts) : undefined;
  const themeFonts = course.theme ? fonts(course.theme.customFonts) : undefined;
  const screens = course.screens.map((s) => ({
    ...s,
    blocks: s.blocks.map((b) => {
      const fields = MEDIA_FIELDS[b.type] ?? [];
      let out: Rec = fields.length > 0 ? withoutServed(b) : b;
      for (const { field, use, optional, poster } of fields) {
        const url = b[field];
        if (typeof url !== 'string') continue;
        // Asked only when the stored block has no poster: an author's own always wins.
        const posterField = poster !== undefined && typeof b[poster] !== 'string' ? poster : undefined;
        const ref: MediaRef = posterField ? { url, use, wantsPoster: true } : { url, use };
        out = putServed(out, field, use, swap(ref), optional === true, posterField);
      }
      for (const { list, field, use } of MEDIA_ITEMS[b.type] ?? []) {
        const items = b[list];
        if (!Array.isArray(items)) continue;
        out = {
          ...out,
          [list]: items.map((it: unknown) => {
            if (!isRec(it)) return it;
            const url = it[field];
            const item = withoutServed(it);
            return typeof url === 'string' ? putServed(item, field, use, swap({ url, use }), false) : item;
          }),
        };
      }
      return out as typeof b;
    }),
  }));
  let theme = course.theme;
  if (theme && themeFonts) {
    const logoUrl = theme.tokens.logoUrl;
    let tokens = theme.tokens;
    if (logoUrl !== undefined) {
      // A logo that resolves nowhere is left out: the header shows the title alone.
      const served = swap({ url: logoUrl, use: 'image' });
      const url = typeof served === 'string' ? served : served.url;
      const { logoUrl: _stored, ...rest } = theme.tokens;
      tokens = url === null ? rest : { ...rest, logoUrl: url };
    }
    theme = { ...theme, tokens, customFonts: themeFonts };
  }
  return { ...course, theme, screens, ...(customFonts ? { customFonts } : {}) };
}
