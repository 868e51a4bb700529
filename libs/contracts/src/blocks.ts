/**
 * The block catalogue's schemas: the 39 block types, each type's fields and the screen shape. They are the
 * contract of a course body (what a client may send and will read back), so they live with the other request and
 * response schemas; the behaviour over them (the write and strict checks, grading, the learner view, the content
 * hash, translatable text) stays in libs/courses, which imports these. See docs/blocks.md.
 */
import { z } from 'zod';

/** The 39 block types of SPEC.md ("Screen and block"), in SPEC order. */
export const BLOCK_TYPES = [
  'heading',
  'text',
  'image',
  'video',
  'audio',
  'embed',
  'button',
  'divider',
  'spacer',
  'quiz_single_choice',
  'quiz_multiple_choice',
  'quiz_true_false',
  'fill_in_blank',
  'flashcard',
  'match',
  'hotspot',
  'results',
  'stack',
  'steps',
  'timeline',
  'accordion',
  'slideshow',
  'callout',
  'code',
  'checklist',
  'compare',
  'quote',
  'spec_table',
  'resource',
  'instructor_note',
  'poll',
  'reflection',
  'ranking',
  'scenario',
  'timed_question',
  'glossary',
  'video_chapters',
  'milestone',
  'markdown',
] as const;

export type BlockType = (typeof BLOCK_TYPES)[number];

/**
 * The 25 types an AI generation job may produce (SPEC.md "Generation job").
 * Media blocks are never generated: the model has no media to point at.
 */
export const GENERATABLE_TYPES = [
  'heading',
  'text',
  'divider',
  'quiz_single_choice',
  'quiz_multiple_choice',
  'quiz_true_false',
  'fill_in_blank',
  'flashcard',
  'match',
  'stack',
  'steps',
  'timeline',
  'accordion',
  'callout',
  'quote',
  'code',
  'compare',
  'spec_table',
  'checklist',
  'glossary',
  'poll',
  'reflection',
  'ranking',
  'timed_question',
  'milestone',
] as const satisfies readonly BlockType[];

export type GeneratableType = (typeof GENERATABLE_TYPES)[number];

const BLOCK_TYPE_SET: ReadonlySet<string> = new Set(BLOCK_TYPES);

export function isBlockType(value: unknown): value is BlockType {
  return typeof value === 'string' && BLOCK_TYPE_SET.has(value);
}

/**
 * Size limits of one course, checked before any block is looked at, so the work (and the
 * error list) of a write is bounded. SPEC.md leaves screens unbounded on paid plans; these are
 * far above any real course (a 2,000-row CSV import makes at most 2,000 screens and blocks)
 * and far below what would tie up the API (docs/blocks.md "Limits").
 */
export const COURSE_LIMITS = { screens: 2000, blocksPerScreen: 500, blocks: 20_000 } as const;

/** SPEC.md Limits: a stack block holds at most 10 cards. */
export const MAX_STACK_CARDS = 10;
/** What a video's text track is: captions (speech and sounds) or subtitles (a translation of the speech). */
export const VIDEO_TRACK_KINDS = ['captions', 'subtitles'] as const;
/** Bounds of a timed question's clock, in seconds. */
export const TIMED_QUESTION_SECONDS = { min: 5, max: 600 } as const;

// Building blocks. Every field is optional at write time (a missing field
// renders blank) and every object is loose (unknown keys are stored and kept).
const str = () => z.string().optional();
const bool = () => z.boolean().optional();
/** Stored media urls are identifiers the player signs when serving, so any string is accepted. */
const url = () => z.string().optional();
const list = <T extends z.ZodType>(item: T) => z.array(item).optional();
const item = <T extends z.core.$ZodLooseShape>(shape: T) => z.looseObject({ id: str(), ...shape });
/** A fraction of the image (0 = left/top edge, 1 = right/bottom edge). */
const fraction = () => z.number().min(0).max(1).optional();

const choiceOption = item({ text: str(), correct: bool() });
const textItem = item({ title: str(), text: str() });
const compareSide = z.looseObject({ title: str(), points: list(z.string()) });

const fieldSchemas = {
  heading: z.looseObject({ text: str(), level: z.number().int().min(1).max(3).optional() }),
  text: z.looseObject({ text: str() }),
  image: z.looseObject({ url: url(), alt: str(), caption: str() }),
  video: z.looseObject({
    url: url(),
    caption: str(),
    poster: url(),
    transcript: str(),
    /** WebVTT caption or subtitle tracks, shown as `<track>` elements (docs/blocks.md "video"). */
    tracks: list(
      z.looseObject({
        src: url(),
        srclang: str(),
        label: str(),
        kind: z.enum(VIDEO_TRACK_KINDS).optional(),
        default: bool(),
      }),
    ),
  }),
  audio: z.looseObject({ url: url(), caption: str(), transcript: str() }),
  embed: z.looseObject({
    url: url(),
    title: str(),
    /** Frame height in CSS pixels. */
    height: z.number().int().min(50).max(2000).optional(),
  }),
  button: z.looseObject({
    label: str(),
    action: z.enum(['next', 'url', 'screen']).optional(),
    url: url(),
    screenId: str(),
  }),
  divider: z.looseObject({}),
  spacer: z.looseObject({ size: z.enum(['small', 'medium', 'large']).optional() }),
  quiz_single_choice: z.looseObject({ question: str(), options: list(choiceOption), explanation: str() }),
  quiz_multiple_choice: z.looseObject({ question: str(), options: list(choiceOption), explanation: str() }),
  quiz_true_false: z.looseObject({ statement: str(), correct: bool(), explanation: str() }),
  fill_in_blank: z.looseObject({
    /** Prose with one `{{<blankId>}}` marker per blank. */
    text: str(),
    blanks: list(item({ answers: list(z.string()) })),
    caseSensitive: bool(),
    explanation: str(),
  }),
  flashcard: z.looseObject({ front: str(), back: str() }),
  match: z.looseObject({
    prompt: str(),
    pairs: list(item({ left: str(), right: str() })),
    explanation: str(),
  }),
  hotspot: z.looseObject({
    image: url(),
    alt: str(),
    question: str(),
    spots: list(
      item({
        x: fraction(),
        y: fraction(),
        radius: z.number().gt(0).max(1).optional(),
        correct: bool(),
        label: str(),
      }),
    ),
    /** true: spots are drawn as markers and the learner picks one; false: the learner clicks anywhere. */
    showSpots: bool(),
    explanation: str(),
  }),
  results: z.looseObject({ title: str(), text: str(), showScore: bool(), showPassed: bool() }),
  stack: z.looseObject({
    cards: z
      .array(textItem)
      .max(MAX_STACK_CARDS, `a stack holds at most ${MAX_STACK_CARDS} cards`)
      .optional(),
  }),
  steps: z.looseObject({ items: list(textItem) }),
  timeline: z.looseObject({ items: list(item({ date: str(), title: str(), text: str() })) }),
  accordion: z.looseObject({ items: list(textItem) }),
  slideshow: z.looseObject({ slides: list(item({ image: url(), alt: str(), caption: str() })) }),
  callout: z.looseObject({
    tone: z.enum(['info', 'tip', 'warning', 'success']).optional(),
    title: str(),
    text: str(),
  }),
  code: z.looseObject({ language: str(), code: str(), caption: str() }),
  checklist: z.looseObject({ items: list(item({ text: str() })) }),
  compare: z.looseObject({ left: compareSide.optional(), right: compareSide.optional() }),
  quote: z.looseObject({ text: str(), author: str(), source: str() }),
  spec_table: z.looseObject({ rows: list(item({ label: str(), value: str() })) }),
  resource: z.looseObject({
    title: str(),
    url: url(),
    description: str(),
    kind: z.enum(['link', 'document', 'download', 'video', 'audio']).optional(),
  }),
  instructor_note: z.looseObject({ text: str() }),
  poll: z.looseObject({ question: str(), options: list(item({ text: str() })), showResults: bool() }),
  reflection: z.looseObject({ prompt: str(), placeholder: str() }),
  ranking: z.looseObject({
    question: str(),
    /** Stored in the correct order; the learner sees them shuffled. */
    items: list(item({ text: str() })),
    explanation: str(),
  }),
  scenario: z.looseObject({
    situation: str(),
    choices: list(item({ text: str(), outcome: str(), correct: bool() })),
  }),
  timed_question: z.looseObject({
    question: str(),
    seconds: z.number().int().min(TIMED_QUESTION_SECONDS.min).max(TIMED_QUESTION_SECONDS.max).optional(),
    options: list(choiceOption),
    explanation: str(),
  }),
  glossary: z.looseObject({ terms: list(item({ term: str(), definition: str() })) }),
  video_chapters: z.looseObject({
    url: url(),
    chapters: list(item({ time: z.number().min(0).optional(), title: str() })),
  }),
  milestone: z.looseObject({ title: str(), text: str() }),
  markdown: z.looseObject({ markdown: str() }),
} satisfies Record<BlockType, z.ZodObject>;

type FieldSchemas = typeof fieldSchemas;

/** The fields of one block type, as the lenient write schema reads them. */
export type BlockData<T extends BlockType> = z.infer<FieldSchemas[T]>;

/**
 * Per type, the schema of its fields (without `id`/`type`). Every field is
 * optional and every object loose: this is the lenient write rule.
 */
export const BlockFields: Record<BlockType, z.ZodObject> = fieldSchemas;

/** Typed access to one type's field schema. */
export function blockFieldsOf<T extends BlockType>(type: T): FieldSchemas[T] {
  return fieldSchemas[type];
}

/** A block as stored: `id`, `type` and that type's fields (plus any unknown ones). */
export interface Block {
  id: string;
  type: BlockType;
  [field: string]: unknown;
}

export interface Screen {
  id: string;
  title: string;
  blocks: Block[];
  [field: string]: unknown;
}

const blockSchemaFor = <T extends BlockType>(type: T) =>
  fieldSchemas[type].extend({ id: z.string().min(1), type: z.literal(type) });

/** Whole-block schema per type (fields plus `id` and the `type` literal); for contracts and OpenAPI. */
export const BlockSchemas = Object.fromEntries(
  BLOCK_TYPES.map((t) => [t, blockSchemaFor(t)]),
) as unknown as Record<BlockType, z.ZodObject>;

/**
 * One block of any type, discriminated on `type`. Suitable for documentation
 * (OpenAPI); `validateScreens` is the validator, because it also checks
 * id uniqueness and reports an unknown type at `type`.
 */
export const BlockSchema = z.discriminatedUnion(
  'type',
  BLOCK_TYPES.map((t) => blockSchemaFor(t)) as unknown as [
    ReturnType<typeof blockSchemaFor>,
    ...ReturnType<typeof blockSchemaFor>[],
  ],
);

export const ScreenSchema = z.looseObject({
  id: z.string().min(1),
  title: z.string(),
  blocks: z.array(BlockSchema),
});
