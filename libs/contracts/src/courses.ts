/**
 * Authoring contracts (issue 3): courses, themes, certificate templates,
 * collections and translations — bodies, resources and the DTOs that render
 * them. Decisions are documented in docs/authoring.md.
 */
import { z } from 'zod';
import { Timestamp } from './common.js';
import { CertificateTokens, CustomFont, MAX_CUSTOM_FONTS, ThemeTokens } from './design.js';
import { ScreenSchema } from './blocks.js';

export {
  ThemeInput as CreateTheme,
  ThemePatch as UpdateTheme,
  CertificateTemplateInput as CreateCertificateTemplate,
  CertificateTemplatePatch as UpdateCertificateTemplate,
} from './design.js';

// ------------------------------------------------------------------ shared parts

export const COURSE_STATUSES = ['draft', 'published'] as const;
export const COURSE_DIRECTIONS = ['ltr', 'rtl'] as const;
export const QUIZ_FEEDBACK = ['deferred', 'immediate'] as const;
export const COURSE_NAVIGATION = ['default', 'hidden'] as const;
/** `free`: screens in any order (default); `sequential`: in order, a screen's graded blocks answered first. */
export const COURSE_COMPLETION = ['free', 'sequential'] as const;
/** Values of `sourceKind`: `manual` (POST /courses), `csv`; `scorm` and `generated` are reserved for those importers. */
export const COURSE_SOURCE_KINDS = ['manual', 'csv', 'scorm', 'generated'] as const;

export const TITLE_MAX = 500;
export const DEFAULT_COURSE_LOCALE = 'en';

function enumOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of: ${values.join(', ')}` });
}

/** A BCP-47 language tag, checked with `Intl.getCanonicalLocales` and stored in its canonical form (`pt-br` → `pt-BR`). */
export const Locale = z
  .string({ error: 'must be a string (a BCP-47 language tag such as "fr" or "pt-BR")' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(35, { error: 'must be at most 35 characters' })
  .transform((tag, ctx) => {
    try {
      const [canonical] = Intl.getCanonicalLocales(tag);
      if (canonical) return canonical;
    } catch {
      // RangeError: not a well-formed tag; reported below.
    }
    ctx.addIssue({
      code: 'custom',
      message: `"${tag}" is not a BCP-47 language tag (e.g. "fr", "pt-BR", "zh-Hant")`,
    });
    return z.NEVER;
  })
  .meta({ description: 'BCP-47 language tag; stored in canonical form', example: 'pt-BR' });

const Title = z
  .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(TITLE_MAX, { error: `must be at most ${TITLE_MAX} characters` });

const PassingScore = z
  .number({ error: 'must be a number from 0 to 100, or null' })
  .min(0, { error: 'must be at least 0 (a percentage)' })
  .max(100, { error: 'must be at most 100 (a percentage)' })
  .nullable()
  .meta({ description: 'Percentage of graded blocks that must be correct; null: any completion passes' });

const RefId = (what: string) =>
  z
    .string({ error: `must be a ${what} id (string) or null` })
    .min(1, { error: 'must not be empty; send null for none' })
    .nullable();

const CustomFonts = z
  .array(CustomFont)
  .max(MAX_CUSTOM_FONTS, { error: `must hold at most ${MAX_CUSTOM_FONTS} fonts` });

/** JSON Schema of one screen (the block catalogue), for the OpenAPI document only. */
const SCREEN_JSON_SCHEMA = z.toJSONSchema(ScreenSchema, {
  target: 'draft-2020-12',
  io: 'input',
  unrepresentable: 'any',
  reused: 'inline',
}) as Record<string, unknown>;
delete SCREEN_JSON_SCHEMA.$schema;

/**
 * `screens` on write. The body schema only requires an array: the course
 * rules (libs/courses `validateScreens`: the 39 types, unique ids, ≤ 10 stack
 * cards, field types, unknown fields kept) run in libs/authoring so that the
 * API and the importers share them and report the same `["screens", …]`
 * paths. The OpenAPI document shows the full screen schema.
 */
export const ScreensInput = z.array(z.unknown()).meta({
  items: SCREEN_JSON_SCHEMA,
  description:
    'Ordered screens `{id, title, blocks}`; block fields per type in docs/blocks.md. Unknown fields are stored and returned. PATCH replaces the whole array.',
});

// ------------------------------------------------------------------------ course

/** POST /courses. Unknown top-level keys are ignored (so a fetched course can be sent back). */
export const CreateCourse = z
  .object({
    title: Title,
    screens: ScreensInput.optional(),
    themeId: RefId('theme').optional(),
    certificateId: RefId('certificate template').optional(),
    passingScore: PassingScore.optional(),
    quizFeedback: enumOf(QUIZ_FEEDBACK).optional(),
    navigation: enumOf(COURSE_NAVIGATION).optional(),
    review: z
      .object({ showCorrectAnswers: z.boolean({ error: 'must be true or false' }) })
      .strict()
      .optional()
      .meta({
        description:
          'The review a learner gets after finishing: `showCorrectAnswers` (default false) adds the right answer beside each graded question (docs/authoring.md "Review").',
      }),
    completion: enumOf(COURSE_COMPLETION).optional().meta({
      description:
        '`free` (default): any screen in any order. `sequential`: screens in order, each screen\'s graded blocks answered before the next; the Player API refuses a batch that jumps ahead (docs/authoring.md "Completion rules").',
    }),
    direction: enumOf(COURSE_DIRECTIONS).optional(),
    locale: Locale.optional(),
    customFonts: CustomFonts.optional(),
  })
  .meta({ id: 'CreateCourse' });
export type CreateCourse = z.infer<typeof CreateCourse>;
export type CreateCourseInput = CreateCourse;

/** PATCH /courses/:id. Every field optional; `screens` replaces the whole array. */
export const UpdateCourse = z
  .object({
    title: Title.optional(),
    screens: ScreensInput.optional(),
    status: enumOf(COURSE_STATUSES).optional(),
    themeId: RefId('theme').optional(),
    certificateId: RefId('certificate template').optional(),
    direction: enumOf(COURSE_DIRECTIONS).optional(),
    passingScore: PassingScore.optional(),
    quizFeedback: enumOf(QUIZ_FEEDBACK).optional(),
    navigation: enumOf(COURSE_NAVIGATION).optional(),
    review: z
      .object({ showCorrectAnswers: z.boolean({ error: 'must be true or false' }) })
      .strict()
      .optional()
      .meta({
        description:
          'The review a learner gets after finishing: `showCorrectAnswers` (default false) adds the right answer beside each graded question (docs/authoring.md "Review").',
      }),
    completion: enumOf(COURSE_COMPLETION).optional().meta({
      description:
        '`free` (default): any screen in any order. `sequential`: screens in order, each screen\'s graded blocks answered before the next; the Player API refuses a batch that jumps ahead (docs/authoring.md "Completion rules").',
    }),
    locale: Locale.optional(),
    customFonts: CustomFonts.optional(),
  })
  .meta({ id: 'UpdateCourse' });
export type UpdateCourse = z.infer<typeof UpdateCourse>;

export const Course = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    title: z.string(),
    status: z.enum(COURSE_STATUSES),
    screens: z.array(ScreenSchema),
    sourceKind: z.string().meta({ description: '`manual`, `csv`, `scorm` or `generated`' }),
    direction: z.enum(COURSE_DIRECTIONS),
    locale: z.string().meta({ description: 'Source language of the course (BCP-47)' }),
    customFonts: z.array(CustomFont),
    themeId: z.string().nullable(),
    certificateId: z
      .string()
      .nullable()
      .meta({ description: 'null: the built-in default certificate design' }),
    passingScore: z.number().nullable(),
    quizFeedback: z.enum(QUIZ_FEEDBACK),
    navigation: z.enum(COURSE_NAVIGATION),
    completion: z.enum(COURSE_COMPLETION),
    review: z.object({ showCorrectAnswers: z.boolean() }),
    contentHash: z
      .string()
      .meta({ description: 'Fingerprint of the material a learner is shown (docs/blocks.md)' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Course' });
export type CourseDto = z.infer<typeof Course>;

export const COURSE_WARNING_CODES = ['rtl_without_locale'] as const;
/** Something about a saved course its author should know: the write succeeded, the course may not read as meant. */
export const CourseWarning = z
  .object({
    code: z.enum(COURSE_WARNING_CODES).meta({
      description:
        '`rtl_without_locale`: the course is `rtl` but its `locale` is a left-to-right language (the default `en`), so the player speaks that language around right-to-left content; set `locale` (docs/authoring.md "Direction and locale").',
    }),
    message: z.string(),
    path: z.array(z.string()).meta({ description: 'The field to look at' }),
  })
  .meta({ id: 'CourseWarning' });
export type CourseWarningDto = z.infer<typeof CourseWarning>;

/** The answer to a course create or update: the course, and warnings when there are any. */
export const CourseWriteResult = z
  .object({
    data: Course,
    meta: z
      .object({ warnings: z.array(CourseWarning) })
      .optional()
      .meta({ description: 'Present only when the saved course has something to warn about' }),
  })
  .meta({ id: 'CourseWriteResult' });

// ------------------------------------------------------------------------- theme

export const Theme = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    tokens: ThemeTokens,
    customFonts: z.array(CustomFont),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Theme' });
export type ThemeDto = z.infer<typeof Theme>;

// ---------------------------------------------------------- certificate template

export const CertificateTemplate = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    tokens: CertificateTokens.meta({ description: 'As stored; omitted tokens take the built-in defaults' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'CertificateTemplate' });
export type CertificateTemplateDto = z.infer<typeof CertificateTemplate>;

// -------------------------------------------------------------------- collection

export const COLLECTION_NAME_MAX = 200;
export const COLLECTION_DESCRIPTION_MAX = 2000;

const CollectionName = z
  .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(COLLECTION_NAME_MAX, { error: `must be at most ${COLLECTION_NAME_MAX} characters` });

const CollectionDescription = z
  .string({ error: 'must be a string or null' })
  .max(COLLECTION_DESCRIPTION_MAX, { error: `must be at most ${COLLECTION_DESCRIPTION_MAX} characters` })
  .nullable();

export const CreateCollection = z
  .object({ name: CollectionName, description: CollectionDescription.optional() })
  .meta({ id: 'CreateCollection' });
export type CreateCollection = z.infer<typeof CreateCollection>;

export const UpdateCollection = z
  .object({ name: CollectionName.optional(), description: CollectionDescription.optional() })
  .meta({ id: 'UpdateCollection' });
export type UpdateCollection = z.infer<typeof UpdateCollection>;

export const AddCollectionCourse = z.object({
  courseId: z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .min(1, { error: 'must not be empty' }),
});
export type AddCollectionCourse = z.infer<typeof AddCollectionCourse>;

export const MoveCollectionCourse = z.object({
  direction: z
    .literal([-1, 1], { error: 'must be -1 (one position earlier) or 1 (one position later)' })
    .meta({
      description:
        '-1: one position earlier; 1: one position later. Moving the first up or the last down changes nothing.',
    }),
});
export type MoveCollectionCourse = z.infer<typeof MoveCollectionCourse>;

/** A course as a collection lists it: the Course object without `screens` (docs/authoring.md). */
export const CollectionCourse = Course.omit({ screens: true }).meta({ id: 'CollectionCourse' });

export type CollectionCourseDto = z.infer<typeof CollectionCourse>;

export const Collection = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    courses: z.array(CollectionCourse).meta({ description: 'The courses in display order' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Collection' });
export type CollectionDto = z.infer<typeof Collection>;

// ------------------------------------------------------------------- translation

export const CreateTranslation = z.object({ locale: Locale }).meta({ id: 'CreateTranslation' });
export type CreateTranslation = z.infer<typeof CreateTranslation>;

export const UpdateTranslation = z
  .object({
    content: z.record(z.string(), z.string({ error: 'a translation must be a string' })).meta({
      description:
        'Path (from GET /courses/:id/translatable) → translated text. Merged into the locale; an empty string clears the path back to the source text.',
    }),
  })
  .meta({ id: 'UpdateTranslation' });
export type UpdateTranslation = z.infer<typeof UpdateTranslation>;

export const Translation = z
  .object({
    id: z.string(),
    courseId: z.string(),
    locale: z.string(),
    content: z
      .record(z.string(), z.string())
      .meta({ description: 'Translated paths only; a path absent here shows the source text' }),
    sourceHash: z
      .string()
      .meta({ description: 'Content hash of the course when this translation was last written' }),
    currentSourceHash: z.string().meta({
      description: 'Content hash of the course now; differs from sourceHash once the course changed',
    }),
    stalePaths: z.array(z.string()).meta({
      description:
        'Translated paths whose source text changed (or that no longer exist) since they were translated',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Translation' });
export type TranslationDto = z.infer<typeof Translation>;

export const TranslatableField = z.object({
  path: z.string().meta({
    description:
      'The key to write under `content`, e.g. `title`, `s:<screenId>.title`, `s:<screenId>.b:<blockId>.question`',
  }),
  group: z.string().meta({ description: '`course` or `s:<screenId>`' }),
  labelKey: z.string(),
  sourceText: z.string(),
});

export const Translatable = z
  .object({
    sourceLocale: z.string(),
    fields: z.array(TranslatableField),
  })
  .meta({ id: 'Translatable' });
export type TranslatableDto = z.infer<typeof Translatable>;
