import { expect } from 'chai';
import { z } from 'zod';
import { JOB_KINDS, type JobInput } from '@lectern/contracts';
import { defineAsyncJobKind, jobKindSpec, type JobHandler } from '@lectern/jobs';

describe('jobs: kind specs (sync and async modes)', () => {
  it('every production kind is seen under its own name and schemas; generation and media processing are asynchronous', () => {
    const asynchronous = ['generation.run', 'media.process'];
    for (const kind of JOB_KINDS) {
      const spec = jobKindSpec(kind);
      expect(spec.kind, kind).to.equal(kind);
      expect(spec.mode, kind).to.equal(asynchronous.includes(kind) ? 'async' : 'sync');
      expect(spec.command.safeParse({ jobId: 'job_1', workspaceId: 'ws_1', kind }).success, kind).to.equal(
        true,
      );
    }
  });

  it('an asynchronous kind defined outside JOB_SPECS gets a command schema of its own kind and its limits', () => {
    const spec = defineAsyncJobKind({
      kind: 'test.unit',
      input: z.object({ n: z.number() }),
      result: z.object({ doubled: z.number() }),
      deadlineMs: 5000,
      maxAttempts: 2,
    });
    expect(spec).to.include({ mode: 'async', kind: 'test.unit', deadlineMs: 5000, maxAttempts: 2 });
    expect(spec.command.safeParse({ jobId: 'j', workspaceId: 'w', kind: 'test.unit' }).success).to.equal(
      true,
    );
    expect(spec.command.safeParse({ jobId: 'j', workspaceId: 'w', kind: 'csv.import' }).success).to.equal(
      false,
    );
    const input: { n: number } = spec.input.parse({ n: 2 });
    expect(input.n).to.equal(2);
  });

  it('production handlers stay typed by their kind (checked by the compiler)', () => {
    const handler: JobHandler<'csv.import'> = async (job) => {
      const title: JobInput<'csv.import'>['title'] = job.input.title;
      // @ts-expect-error the csv.import input has no courseId
      void job.input.courseId;
      return { courseId: title ?? 'c', issues: [] };
    };
    // @ts-expect-error a csv.import handler must return its result shape
    const wrong: JobHandler<'csv.import'> = async () => ({ key: 'x' });
    expect(handler).to.be.a('function');
    expect(wrong).to.be.a('function');
  });
});
