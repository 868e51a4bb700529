import { expect } from 'chai';
import {
  BLOCK_TYPES,
  BlockFields,
  BlockSchema,
  GENERATABLE_TYPES,
  ScreenSchema,
  isBlockType,
} from '@lectern/courses';
import { VALID_BLOCKS } from './fixtures.js';

// Copied from SPEC.md "Screen and block" so the catalogue cannot drift from it.
const SPEC_TYPES =
  'heading, text, image, video, audio, embed, button, divider, spacer, quiz_single_choice, quiz_multiple_choice, quiz_true_false, fill_in_blank, flashcard, match, hotspot, results, stack, steps, timeline, accordion, slideshow, callout, code, checklist, compare, quote, spec_table, resource, instructor_note, poll, reflection, ranking, scenario, timed_question, glossary, video_chapters, milestone, markdown'.split(
    ', ',
  );
// SPEC.md "Generation job".
const SPEC_GENERATED =
  'heading, text, divider, quiz_single_choice, quiz_multiple_choice, quiz_true_false, fill_in_blank, flashcard, match, stack, steps, timeline, accordion, callout, quote, code, compare, spec_table, checklist, glossary, poll, reflection, ranking, timed_question, milestone'.split(
    ', ',
  );

describe('courses: block catalogue', () => {
  it('has exactly the 39 block types of SPEC.md', () => {
    expect(BLOCK_TYPES).to.have.length(39);
    expect([...BLOCK_TYPES]).to.deep.equal(SPEC_TYPES);
  });

  it('lists the 25 generatable types of SPEC.md and no media block', () => {
    expect(GENERATABLE_TYPES).to.have.length(25);
    expect([...GENERATABLE_TYPES].sort()).to.deep.equal([...SPEC_GENERATED].sort());
    for (const media of ['image', 'video', 'audio', 'embed', 'hotspot', 'slideshow']) {
      expect(GENERATABLE_TYPES as readonly string[]).not.to.include(media);
    }
  });

  it('recognises block types', () => {
    expect(isBlockType('heading')).to.equal(true);
    expect(isBlockType('Heading')).to.equal(false);
    expect(isBlockType(3)).to.equal(false);
  });

  it('has a field schema for every type', () => {
    expect(Object.keys(BlockFields).sort()).to.deep.equal([...BLOCK_TYPES].sort());
  });

  for (const type of BLOCK_TYPES) {
    it(`${type}: every field is optional and unknown fields are kept`, () => {
      expect(BlockFields[type].safeParse({}).success, 'empty block').to.equal(true);
      const parsed = BlockFields[type].parse({ ...VALID_BLOCKS[type], somethingElse: { a: 1 } });
      expect(parsed.somethingElse).to.deep.equal({ a: 1 });
    });
  }

  it('keeps unknown fields inside items too', () => {
    const parsed = BlockFields.quiz_single_choice.parse({ options: [{ id: 'a', text: 'x', hint: 'h' }] });
    expect(parsed.options).to.deep.equal([{ id: 'a', text: 'x', hint: 'h' }]);
  });

  it('rejects values out of range or outside an enum', () => {
    expect(BlockFields.heading.safeParse({ level: 4 }).success).to.equal(false);
    expect(BlockFields.heading.safeParse({ level: 1.5 }).success).to.equal(false);
    expect(BlockFields.timed_question.safeParse({ seconds: 4 }).success).to.equal(false);
    expect(BlockFields.timed_question.safeParse({ seconds: 601 }).success).to.equal(false);
    expect(BlockFields.timed_question.safeParse({ seconds: 600 }).success).to.equal(true);
    expect(BlockFields.callout.safeParse({ tone: 'danger' }).success).to.equal(false);
    expect(BlockFields.button.safeParse({ action: 'jump' }).success).to.equal(false);
    expect(BlockFields.hotspot.safeParse({ spots: [{ x: 1.2 }] }).success).to.equal(false);
    expect(BlockFields.stack.safeParse({ cards: Array.from({ length: 11 }, () => ({})) }).success).to.equal(
      false,
    );
  });

  it('treats null as the wrong type, not as a missing field', () => {
    expect(BlockFields.image.safeParse({ caption: null }).success).to.equal(false);
  });

  it('offers whole-block and screen schemas for contracts', () => {
    expect(BlockSchema.safeParse(VALID_BLOCKS.match).success).to.equal(true);
    expect(BlockSchema.safeParse({ id: 'x', type: 'nope' }).success).to.equal(false);
    expect(
      ScreenSchema.safeParse({ id: 's', title: 't', blocks: Object.values(VALID_BLOCKS) }).success,
    ).to.equal(true);
  });
});
