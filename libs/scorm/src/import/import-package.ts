/**
 * A checked package → what to create: our own export (roundtrip) or a third party's (salvage). Pure over the
 * package: no database. docs/scorm.md is the contract.
 */
import path from 'node:path';
import { z } from 'zod';
import type { ScormImportWarning } from '@lectern/contracts';
import { AppError, inputIssue } from '@lectern/errors';
import { COURSE_ENTRY, GENERATOR_SCHEMA } from '../package-layout.js';
import { refused, type PackageEntry, type ZipPackage } from './zip-guard.js';
import { allStrings, asArray, attr, decodeText, parseXml, textOf, type XmlNode } from './xml.js';
import { HTML_CAPS, htmlToBlocks, type DraftBlock } from './html-blocks.js';

const MiB = 1024 * 1024;
export const READ_CAPS = { manifest: 8 * MiB, course: 64 * MiB, html: 4 * MiB } as const;

/** Screens and blocks a salvage keeps (the course limits of docs/blocks.md). */
const MAX_SCREENS = 2000;
const MAX_BLOCKS_PER_SCREEN = 500;

/** The course of a roundtrip package (`lectern/course.json`): the stored course as the API returns it. */
const RoundtripCourse = z.looseObject({
  title: z.string(),
  screens: z.array(z.unknown()),
  direction: z.string().optional(),
  locale: z.string().optional(),
  customFonts: z.array(z.unknown()).optional(),
  themeId: z.string().nullable().optional(),
  certificateId: z.string().nullable().optional(),
  passingScore: z.number().nullable().optional(),
  quizFeedback: z.string().optional(),
  navigation: z.string().optional(),
  translations: z
    .array(z.looseObject({ locale: z.string(), content: z.record(z.string(), z.string()) }))
    .optional(),
});
export type RoundtripCourse = z.infer<typeof RoundtripCourse>;

export interface SalvagedScreen {
  id: string;
  title: string;
  blocks: (DraftBlock & { id: string })[];
}

export type ImportPlan =
  | { kind: 'roundtrip'; course: RoundtripCourse; warnings: ScormImportWarning[] }
  | { kind: 'salvaged'; title: string; screens: SalvagedScreen[]; warnings: ScormImportWarning[] };

/** The manifest: `imsmanifest.xml` at the root, or in the one top-level folder; any casing. */
export function findManifest(pkg: ZipPackage): PackageEntry {
  const found = [...pkg.entries.values()].filter(
    (e) => path.posix.basename(e.name).toLowerCase() === 'imsmanifest.xml',
  );
  const depth = (e: PackageEntry) => e.name.split('/').length - 1;
  const best = found
    .filter((e) => depth(e) <= 1)
    .sort((a, b) => depth(a) - depth(b) || a.name.localeCompare(b.name))[0];
  if (!best)
    throw refused(
      'no_manifest',
      found.length
        ? `imsmanifest.xml must sit at the package root or in its one top-level folder (found ${found[0].name})`
        : 'The package has no imsmanifest.xml',
    );
  return best;
}

/** A path relative to the manifest folder and the `xml:base` chain; null when it leaves the package. */
function resolveHref(bases: (string | undefined)[], href: string): string | null {
  const clean = href.split(/[?#]/)[0];
  let decoded = clean;
  try {
    decoded = decodeURIComponent(clean);
  } catch {
    // keep as written
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(decoded) || decoded.startsWith('/')) return null;
  const joined = path.posix.normalize(path.posix.join(...bases.map((b) => b ?? ''), decoded));
  if (joined.startsWith('../') || joined === '..') return null;
  return joined.replace(/^\.\//, '');
}

export async function planImport(pkg: ZipPackage): Promise<ImportPlan> {
  const manifestEntry = findManifest(pkg);
  const root = path.posix.dirname(manifestEntry.name) === '.' ? '' : path.posix.dirname(manifestEntry.name);
  const doc = parseXml(await pkg.read(manifestEntry, READ_CAPS.manifest), manifestEntry.name);
  const manifest = asArray(doc.manifest)[0];
  if (!manifest)
    throw refused('not_a_manifest', `${manifestEntry.name} has no <manifest> element`, manifestEntry.name);

  const marked = allStrings(manifest.metadata).some((s) => s.includes(GENERATOR_SCHEMA));
  const courseEntry = pkg.find(path.posix.join(root, COURSE_ENTRY));
  if (marked && courseEntry) return roundtrip(pkg, courseEntry);
  const warnings: ScormImportWarning[] = [];
  if (marked !== Boolean(courseEntry))
    warnings.push({
      code: 'roundtrip_incomplete',
      message: marked
        ? `The manifest names this service but ${COURSE_ENTRY} is missing; the package is salvaged`
        : `${COURSE_ENTRY} is present but the manifest does not name this service; the package is salvaged`,
    });
  return salvage(pkg, manifest, root, warnings);
}

async function roundtrip(pkg: ZipPackage, entry: PackageEntry): Promise<ImportPlan> {
  let json: unknown;
  try {
    json = JSON.parse(decodeText(await pkg.read(entry, READ_CAPS.course)));
  } catch (err) {
    if (err instanceof SyntaxError)
      throw refused('course_unreadable', `${entry.name} is not JSON`, entry.name);
    throw err;
  }
  // Either the course itself or `{course, translations}`.
  const candidate =
    json &&
    typeof json === 'object' &&
    'course' in json &&
    typeof (json as { course: unknown }).course === 'object'
      ? {
          ...(json as { course: object }).course,
          translations: (json as { translations?: unknown }).translations,
        }
      : json;
  // The input rules of POST /courses (nesting at most MAX_JSON_DEPTH, no NUL or lone surrogate), checked
  // iteratively before anything recursive (the schema, JSON.stringify on the way to the database) meets it.
  const issue = inputIssue(candidate, ['course']);
  if (issue)
    throw new AppError('invalid_request', 'The course in the package is invalid', { issues: [issue] });
  const parsed = RoundtripCourse.safeParse(candidate);
  if (!parsed.success)
    throw refused(
      'course_unreadable',
      `${entry.name} is not a course (${parsed.error.issues[0]?.message})`,
      entry.name,
    );
  return { kind: 'roundtrip', course: parsed.data, warnings: [] };
}

/** Sequencing of 2004 (IMS SS) and 1.2 (`adlcp:prerequisites`): the player has its own linear navigation. */
const SEQUENCING = ['sequencing', 'sequencingCollection', 'prerequisites'];

function salvage(
  pkg: ZipPackage,
  manifest: XmlNode,
  root: string,
  warnings: ScormImportWarning[],
): Promise<ImportPlan> {
  const orgs = asArray(manifest.organizations);
  const organizations = orgs.flatMap((o) => asArray(o.organization));
  const defaultId = orgs[0] ? attr(orgs[0], 'default') : undefined;
  const org = organizations.find((o) => attr(o, 'identifier') === defaultId) ?? organizations[0];
  for (const other of organizations.filter((o) => o !== org))
    warnings.push({
      code: 'organization_ignored',
      message: `Only the default organization is imported; "${textOf(other.title) || attr(other, 'identifier')}" is left out`,
      path: attr(other, 'identifier'),
    });
  if (asArray(manifest.sequencingCollection).length || (org && SEQUENCING.some((k) => org[k] !== undefined)))
    warnings.push({
      code: 'sequencing_ignored',
      message: 'Sequencing rules and prerequisites are not imported',
    });

  const resourcesNode = asArray(manifest.resources)[0] ?? {};
  const resources = new Map(asArray(resourcesNode.resource).map((r) => [attr(r, 'identifier') ?? '', r]));
  const resourcesBase = attr(resourcesNode, 'base');
  const manifestBase = attr(manifest, 'base');

  // Depth-first, document order, with an explicit stack; one item past the screen cap is enough to warn.
  const items: { node: XmlNode; depth: number }[] = [];
  const stack: { node: XmlNode; depth: number }[] = org
    ? asArray(org.item)
        .reverse()
        .map((node) => ({ node, depth: 0 }))
    : [];
  while (stack.length > 0 && items.length <= MAX_SCREENS) {
    const next = stack.pop()!;
    items.push(next);
    const children = asArray(next.node.item);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], depth: next.depth + 1 });
  }
  const orgTitle = org ? textOf(org.title) : '';
  return buildScreens(pkg, items, { resources, bases: [root, manifestBase, resourcesBase] }, warnings).then(
    (screens) => ({
      kind: 'salvaged' as const,
      title: orgTitle || screens[0]?.title || 'Imported SCORM package',
      screens,
      warnings,
    }),
  );
}

async function buildScreens(
  pkg: ZipPackage,
  items: { node: XmlNode; depth: number }[],
  ctx: { resources: Map<string, XmlNode>; bases: (string | undefined)[] },
  warnings: ScormImportWarning[],
): Promise<SalvagedScreen[]> {
  const screens: SalvagedScreen[] = [];
  const htmlCache = new Map<string, ReturnType<typeof htmlToBlocks> | null>();
  let sequencingWarned = warnings.some((w) => w.code === 'sequencing_ignored');
  for (const { node } of items) {
    const id = attr(node, 'identifier') ?? `item${screens.length + 1}`;
    if (screens.length >= MAX_SCREENS) {
      warnings.push({
        code: 'truncated',
        message: `Only the first ${MAX_SCREENS} items are imported`,
        path: id,
      });
      break;
    }
    if (!sequencingWarned && SEQUENCING.some((k) => node[k] !== undefined)) {
      warnings.push({
        code: 'sequencing_ignored',
        message: 'Sequencing rules and prerequisites are not imported',
        path: id,
      });
      sequencingWarned = true;
    }
    let title = textOf(node.title);
    const n = screens.length + 1;
    const blocks: DraftBlock[] = [];
    let pageCut = false;
    const ref = attr(node, 'identifierref');
    if (ref !== undefined) {
      const resource = ctx.resources.get(ref);
      const href = resource ? attr(resource, 'href') : undefined;
      if (!resource) {
        warnings.push({
          code: 'resource_missing',
          message: `Item "${title || id}" refers to resource "${ref}", which the manifest lacks`,
          path: id,
        });
      } else if (!href) {
        warnings.push({
          code: 'item_unreadable',
          message: `Resource "${ref}" has no href to launch`,
          path: id,
        });
      } else {
        const file = resolveHref([...ctx.bases, attr(resource, 'base')], href);
        const entry = file === null ? undefined : pkg.find(file);
        if (!entry) {
          warnings.push({
            code: 'resource_missing',
            message: `${file ?? href} is not in the package`,
            path: file ?? href,
          });
        } else if (!/\.(x?html?)$/i.test(entry.name)) {
          warnings.push({
            code: 'item_unreadable',
            message: `${entry.name} is not an HTML page; its content is not imported`,
            path: entry.name,
          });
        } else if (entry.size > READ_CAPS.html) {
          warnings.push({
            code: 'item_unreadable',
            message: `${entry.name} is larger than ${READ_CAPS.html / MiB} MiB; not read`,
            path: entry.name,
          });
        } else {
          if (!htmlCache.has(entry.name)) {
            const mapped = htmlToBlocks(decodeText(await pkg.read(entry, READ_CAPS.html)), entry.name, {
              maxBlocks: MAX_BLOCKS_PER_SCREEN,
            });
            for (const w of mapped.warnings) warnings.push(w);
            htmlCache.set(entry.name, mapped);
          }
          const mapped = htmlCache.get(entry.name)!;
          // One at a time: `push(...blocks)` passes every block as an argument and overflows the stack.
          for (const b of mapped.blocks) blocks.push(b);
          if (mapped.truncated) pageCut = true;
          if (!title && mapped.title) title = mapped.title;
        }
      }
    }
    if (!title) {
      title = `Untitled item ${n}`;
      warnings.push({
        code: 'title_missing',
        message: `Item "${id}" has no title; named "${title}"`,
        path: id,
      });
    }
    if (blocks.length === 0 && ref === undefined) blocks.push({ type: 'heading', text: title, level: 1 });
    if (blocks.length > MAX_BLOCKS_PER_SCREEN || pageCut) {
      warnings.push({
        code: 'truncated',
        message:
          blocks.length > MAX_BLOCKS_PER_SCREEN
            ? `Item "${title}" kept its first ${MAX_BLOCKS_PER_SCREEN} blocks`
            : `Item "${title}": its page holds more than ${HTML_CAPS.maxElements.toLocaleString('en-US')} elements; the rest is left out`,
        path: id,
      });
      if (blocks.length > MAX_BLOCKS_PER_SCREEN) blocks.length = MAX_BLOCKS_PER_SCREEN;
    }
    screens.push({
      id: `s${n}`,
      title,
      blocks: blocks.map((b, j) => ({ ...b, id: `s${n}b${j + 1}` })),
    });
  }
  return screens;
}
