/**
 * Row → response mappers of the authoring resources. They live with the capability that owns the rows; the
 * response schemas they produce are in libs/contracts.
 */
import {
  iso,
  type CertificateTemplateDto,
  type CollectionCourseDto,
  type CollectionDto,
  type CourseDto,
  type CourseWarningDto,
  type ThemeDto,
} from '@lectern/contracts';
import { directionOf } from '@lectern/courses';
import type {
  CertificateTemplate as CertificateTemplateRow,
  Collection as CollectionRow,
  Course as CourseRow,
  Theme as ThemeRow,
} from '@lectern/db';

/**
 * What the author of a saved course should hear about it (docs/authoring.md "Direction and locale"): an `rtl`
 * course whose locale reads left to right gets the player's words in that language around right-to-left content.
 */
export function courseWarnings(row: Pick<CourseRow, 'direction' | 'locale'>): CourseWarningDto[] {
  if (row.direction !== 'rtl' || directionOf(row.locale) === 'rtl') return [];
  return [
    {
      code: 'rtl_without_locale',
      message: `direction is "rtl" but locale is "${row.locale}", a left-to-right language: learners get the player's own words (Continue, Back, Contents) in it. Set locale to the course's language, e.g. "ar" or "he".`,
      path: ['locale'],
    },
  ];
}

export function courseDto(row: CourseRow): CourseDto {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    title: row.title,
    status: row.status,
    screens: row.screens as CourseDto['screens'],
    sourceKind: row.sourceKind,
    direction: row.direction,
    locale: row.locale,
    customFonts: row.customFonts as CourseDto['customFonts'],
    themeId: row.themeId,
    certificateId: row.certificateId,
    passingScore:
      row.passingScore === null || row.passingScore === undefined ? null : Number(row.passingScore),
    quizFeedback: row.quizFeedback,
    navigation: row.navigation,
    completion: row.completion ?? 'free',
    review: { showCorrectAnswers: row.reviewShowCorrectAnswers ?? false },
    contentHash: row.contentHash,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function themeDto(row: ThemeRow): ThemeDto {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    tokens: row.tokens as ThemeDto['tokens'],
    customFonts: row.customFonts as ThemeDto['customFonts'],
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function certificateTemplateDto(row: CertificateTemplateRow): CertificateTemplateDto {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    tokens: row.tokens as CertificateTemplateDto['tokens'],
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function collectionDto(row: CollectionRow, courses: CollectionCourseDto[]): CollectionDto {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    description: row.description,
    courses,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}
