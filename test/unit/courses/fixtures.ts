import type { Block, BlockType, Screen } from '@lectern/courses';

/** One well-formed block of every type: passes the lenient and the strict check. */
export const VALID_BLOCKS: { [T in BlockType]: Block & { type: T } } = {
  heading: { id: 'heading-1', type: 'heading', text: 'Welcome', level: 1 },
  text: { id: 'text-1', type: 'text', text: 'Fire needs **heat**, fuel and oxygen.' },
  image: {
    id: 'image-1',
    type: 'image',
    url: 'media://img/triangle.png',
    alt: 'The fire triangle',
    caption: 'Fig. 1',
  },
  video: {
    id: 'video-1',
    type: 'video',
    url: 'media://vid/intro.mp4',
    caption: 'Intro',
    poster: 'media://img/p.png',
  },
  audio: {
    id: 'audio-1',
    type: 'audio',
    url: 'media://aud/intro.mp3',
    caption: 'Listen',
    transcript: 'Hello.',
  },
  embed: { id: 'embed-1', type: 'embed', url: 'https://example.com/widget', title: 'Widget', height: 400 },
  button: { id: 'button-1', type: 'button', label: 'Go to the quiz', action: 'screen', screenId: 's-quiz' },
  divider: { id: 'divider-1', type: 'divider' },
  spacer: { id: 'spacer-1', type: 'spacer', size: 'large' },
  quiz_single_choice: {
    id: 'single-1',
    type: 'quiz_single_choice',
    question: 'Which gas feeds a fire?',
    options: [
      { id: 'a', text: 'Oxygen', correct: true },
      { id: 'b', text: 'Helium', correct: false },
      { id: 'c', text: 'Argon' },
    ],
    explanation: 'Combustion needs an oxidiser.',
  },
  quiz_multiple_choice: {
    id: 'multi-1',
    type: 'quiz_multiple_choice',
    question: 'Which are fuels?',
    options: [
      { id: 'a', text: 'Wood', correct: true },
      { id: 'b', text: 'Paper', correct: true },
      { id: 'c', text: 'Water', correct: false },
    ],
  },
  quiz_true_false: {
    id: 'tf-1',
    type: 'quiz_true_false',
    statement: 'Water puts out oil fires.',
    correct: false,
  },
  fill_in_blank: {
    id: 'fill-1',
    type: 'fill_in_blank',
    text: 'Fire needs {{b1}}, fuel and {{b2}}.',
    blanks: [
      { id: 'b1', answers: ['heat'] },
      { id: 'b2', answers: ['oxygen', 'O2', 'air'] },
    ],
    caseSensitive: false,
  },
  flashcard: { id: 'card-1', type: 'flashcard', front: 'PASS', back: 'Pull, Aim, Squeeze, Sweep' },
  match: {
    id: 'match-1',
    type: 'match',
    prompt: 'Match the class to the fuel',
    pairs: [
      { id: 'p1', left: 'Class A', right: 'Solids' },
      { id: 'p2', left: 'Class B', right: 'Liquids' },
      { id: 'p3', left: 'Class C', right: 'Gases' },
    ],
  },
  hotspot: {
    id: 'hotspot-1',
    type: 'hotspot',
    image: 'media://img/room.png',
    alt: 'An office',
    question: 'Click the extinguisher',
    spots: [
      { id: 'ext', x: 0.2, y: 0.5, radius: 0.05, correct: true, label: 'Extinguisher' },
      { id: 'bin', x: 0.7, y: 0.5, radius: 0.05, correct: false, label: 'Bin' },
    ],
  },
  results: { id: 'results-1', type: 'results', title: 'Your results', showScore: true, showPassed: true },
  stack: {
    id: 'stack-1',
    type: 'stack',
    cards: [
      { id: 'c1', title: 'Heat', text: 'A source of ignition' },
      { id: 'c2', title: 'Fuel', text: 'Anything that burns' },
    ],
  },
  steps: {
    id: 'steps-1',
    type: 'steps',
    items: [
      { id: 'i1', title: 'Raise the alarm' },
      { id: 'i2', title: 'Leave the building', text: 'Use the stairs.' },
    ],
  },
  timeline: {
    id: 'timeline-1',
    type: 'timeline',
    items: [
      { id: 't1', date: '1666', title: 'Great Fire of London' },
      { id: 't2', date: '1866', title: 'First fire brigade act', text: 'Metropolitan Fire Brigade Act.' },
    ],
  },
  accordion: {
    id: 'accordion-1',
    type: 'accordion',
    items: [
      { id: 'a1', title: 'Who?', text: 'Everyone.' },
      { id: 'a2', title: 'When?', text: 'Yearly.' },
    ],
  },
  slideshow: {
    id: 'slides-1',
    type: 'slideshow',
    slides: [{ id: 'sl1', image: 'media://img/1.png', alt: 'Exit sign', caption: 'Exits are green' }],
  },
  callout: {
    id: 'callout-1',
    type: 'callout',
    tone: 'warning',
    title: 'Careful',
    text: 'Never use water on oil.',
  },
  code: { id: 'code-1', type: 'code', language: 'bash', code: 'echo "fire drill"', caption: 'Run it' },
  checklist: {
    id: 'check-1',
    type: 'checklist',
    items: [
      { id: 'k1', text: 'Know your exits' },
      { id: 'k2', text: 'Know your assembly point' },
    ],
  },
  compare: {
    id: 'compare-1',
    type: 'compare',
    left: { title: 'CO2', points: ['Electrical fires', 'No residue'] },
    right: { title: 'Foam', points: ['Liquid fires'] },
  },
  quote: { id: 'quote-1', type: 'quote', text: 'Prevention is better than cure.', author: 'Erasmus' },
  spec_table: {
    id: 'spec-1',
    type: 'spec_table',
    rows: [
      { label: 'Weight', value: '6 kg' },
      { label: 'Range', value: '4 m' },
    ],
  },
  resource: {
    id: 'resource-1',
    type: 'resource',
    title: 'Fire safety guide',
    url: 'https://example.com/guide.pdf',
    description: 'The full guide',
    kind: 'document',
  },
  instructor_note: { id: 'note-1', type: 'instructor_note', text: 'Demonstrate with a real extinguisher.' },
  poll: {
    id: 'poll-1',
    type: 'poll',
    question: 'Have you used an extinguisher?',
    options: [
      { id: 'y', text: 'Yes' },
      { id: 'n', text: 'No' },
    ],
  },
  reflection: {
    id: 'reflect-1',
    type: 'reflection',
    prompt: 'Where is your nearest exit?',
    placeholder: 'Describe…',
  },
  ranking: {
    id: 'rank-1',
    type: 'ranking',
    question: 'Put the steps in order',
    items: [
      { id: 'r1', text: 'Pull the pin' },
      { id: 'r2', text: 'Aim at the base' },
      { id: 'r3', text: 'Squeeze the handle' },
      { id: 'r4', text: 'Sweep side to side' },
    ],
  },
  scenario: {
    id: 'scenario-1',
    type: 'scenario',
    situation: 'You smell smoke in the corridor.',
    choices: [
      { id: 'alarm', text: 'Raise the alarm', outcome: 'Everyone gets out.', correct: true },
      { id: 'ignore', text: 'Carry on working', outcome: 'The fire spreads.', correct: false },
    ],
  },
  timed_question: {
    id: 'timed-1',
    type: 'timed_question',
    question: 'Dial which number?',
    seconds: 20,
    options: [
      { id: 'a', text: '112', correct: true },
      { id: 'b', text: '411', correct: false },
    ],
  },
  glossary: {
    id: 'gloss-1',
    type: 'glossary',
    terms: [{ id: 'g1', term: 'Combustion', definition: 'Burning.' }],
  },
  video_chapters: {
    id: 'chapters-1',
    type: 'video_chapters',
    url: 'media://vid/intro.mp4',
    chapters: [
      { id: 'ch1', time: 0, title: 'Start' },
      { id: 'ch2', time: 95.5, title: 'Drill' },
    ],
  },
  milestone: { id: 'milestone-1', type: 'milestone', title: 'Halfway there', text: 'Well done.' },
  markdown: { id: 'md-1', type: 'markdown', markdown: '# Notes\n\n- one\n- two' },
};

export const clone = <T>(v: T): T => structuredClone(v);

/** A course with every block type spread over a few screens; the button leads to `s-quiz`. */
export function allTypesScreens(): Screen[] {
  const blocks = Object.values(clone(VALID_BLOCKS));
  return [
    { id: 's-intro', title: 'Intro', blocks: blocks.slice(0, 9) },
    { id: 's-quiz', title: 'Quiz', blocks: blocks.slice(9, 17) },
    { id: 's-more', title: 'More', blocks: blocks.slice(17) },
  ];
}

/** Screens with one block, for focused tests. */
export function oneBlock(block: Block, screenId = 's1'): Screen[] {
  return [{ id: screenId, title: 'Screen', blocks: [block] }];
}
