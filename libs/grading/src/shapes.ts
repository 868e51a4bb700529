import { isRecord, type JsonRecord } from './util.js';

/**
 * The lenient write rule (libs/contracts `blockFieldsOf`) of the graded block types, written out without zod so
 * the browser player can grade with this library too. A block whose fields break it has no usable answer key,
 * exactly as when the server parsed it with the zod schema; test/unit/grading/shapes.test.ts holds the two
 * rules side by side so they cannot drift apart.
 */
type Check = (value: unknown) => boolean;

const opt =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
const str = opt((v) => typeof v === 'string');
const bool = opt((v) => typeof v === 'boolean');
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** A fraction of the image. */
const fraction = opt((v) => finite(v) && v >= 0 && v <= 1);
const radius = opt((v) => finite(v) && v > 0 && v <= 1);
/** libs/contracts TIMED_QUESTION_SECONDS. */
const seconds = opt((v) => finite(v) && Number.isInteger(v) && v >= 5 && v <= 600);
const strings = opt((v) => Array.isArray(v) && v.every((x) => typeof x === 'string'));

type Shape = Record<string, Check>;
const fits = (value: unknown, shape: Shape): value is JsonRecord =>
  isRecord(value) && Object.entries(shape).every(([key, check]) => check(value[key]));
const list = (shape: Shape): Check => opt((v) => Array.isArray(v) && v.every((x) => fits(x, shape)));
const item = (shape: Shape): Shape => ({ id: str, ...shape });

const choiceOption = item({ text: str, correct: bool });

export const GRADED_SHAPES = {
  quiz_single_choice: { question: str, options: list(choiceOption), explanation: str },
  quiz_multiple_choice: { question: str, options: list(choiceOption), explanation: str },
  quiz_true_false: { statement: str, correct: bool, explanation: str },
  fill_in_blank: {
    text: str,
    blanks: list(item({ answers: strings })),
    caseSensitive: bool,
    explanation: str,
  },
  match: { prompt: str, pairs: list(item({ left: str, right: str })), explanation: str },
  hotspot: {
    image: str,
    alt: str,
    question: str,
    spots: list(item({ x: fraction, y: fraction, radius, correct: bool, label: str })),
    showSpots: bool,
    explanation: str,
  },
  ranking: { question: str, items: list(item({ text: str })), explanation: str },
  scenario: { situation: str, choices: list(item({ text: str, outcome: str, correct: bool })) },
  timed_question: { question: str, seconds, options: list(choiceOption), explanation: str },
} satisfies Record<string, Shape>;

/** Whether a block's fields keep the lenient write rule of its (graded) type. */
export function fitsShape(type: keyof typeof GRADED_SHAPES, block: unknown): block is JsonRecord {
  return fits(block, GRADED_SHAPES[type]);
}
