import { expect } from 'chai';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { api, expectIssue, expectNotFound, expectStatus, type CourseDto } from '../support/authoring.js';
import type { CollectionDto } from '@lectern/contracts';
import type { PlanName } from '@lectern/db';

describe('authoring: collections (SPEC "Collections")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const workspace = async (plan: PlanName = 'sandbox', name = 'Collections') => {
    const ws = await makeWorkspace(em(), plan, name);
    const req = api(app.base, ws.key);
    const course = async (title: string) => {
      const res = await req<CourseDto>('POST', '/courses', { title });
      expectStatus(res, 201);
      return res.body.data.id;
    };
    const collection = async (name = 'Path') => {
      const res = await req<CollectionDto>('POST', '/collections', { name });
      expectStatus(res, 201);
      return res.body.data.id;
    };
    const order = async (id: string) =>
      (await req<CollectionDto>('GET', `/collections/${id}`)).body.data.courses.map((c) => c.title);
    return { ws, req, course, collection, order };
  };

  it('CRUD on every plan (Sandbox here): create, get, list, patch, delete', async () => {
    const { ws, req } = await workspace('sandbox');
    const created = await req<CollectionDto>('POST', '/collections', {
      name: '  Onboarding ',
      description: 'First week',
    });
    expectStatus(created, 201);
    expect(created.body.data).to.deep.include({
      workspaceId: ws.id,
      name: 'Onboarding',
      description: 'First week',
      courses: [],
    });
    expect(created.body.data.id).to.match(/^col_/);
    const id = created.body.data.id;

    const noDescription = await req<CollectionDto>('POST', '/collections', { name: 'Bare' });
    expect(noDescription.body.data.description).to.equal(null);

    expect((await req<CollectionDto>('GET', `/collections/${id}`)).body.data).to.deep.equal(
      created.body.data,
    );
    const list = await req<CollectionDto[]>('GET', '/collections');
    expect(list.body.data.map((c) => c.id)).to.deep.equal([noDescription.body.data.id, id]);
    expect(list.body).to.not.have.property('pagination');

    const renamed = await req<CollectionDto>('PATCH', `/collections/${id}`, { name: 'Week one' });
    expect(renamed.body.data).to.deep.include({ name: 'Week one', description: 'First week' });
    const cleared = await req<CollectionDto>('PATCH', `/collections/${id}`, { description: null });
    expect(cleared.body.data).to.deep.include({ name: 'Week one', description: null });

    expectStatus(await req('DELETE', `/collections/${id}`), 204);
    expectNotFound(await req('GET', `/collections/${id}`));
    expectNotFound(await req('PATCH', `/collections/${id}`, { name: 'x' }));
    expectNotFound(await req('DELETE', `/collections/${id}`));
  });

  it('validation: name required and non-empty, description a string or null', async () => {
    const { req, collection } = await workspace('build');
    expectIssue(await req('POST', '/collections', {}), ['name']);
    expectIssue(await req('POST', '/collections', { name: '' }), ['name']);
    expectIssue(await req('POST', '/collections', { name: 'x', description: 5 }), ['description']);
    const id = await collection();
    expectIssue(await req('PATCH', `/collections/${id}`, { name: '   ' }), ['name']);
    expectIssue(await req('POST', `/collections/${id}/courses`, {}), ['courseId']);
  });

  it('add appends; the single fetch lists the Course objects (without screens) in display order', async () => {
    const { req, course, collection } = await workspace('build');
    const a = await course('A');
    const b = await course('B');
    const c = await course('C');
    await req('PATCH', `/courses/${b}`, { status: 'published' });
    const id = await collection();
    for (const courseId of [c, a, b]) {
      const res = await req<CollectionDto>('POST', `/collections/${id}/courses`, { courseId });
      expectStatus(res, 201);
    }
    const got = await req<CollectionDto>('GET', `/collections/${id}`);
    expect(got.body.data.courses.map((x) => ({ id: x.id, title: x.title, status: x.status }))).to.deep.equal([
      { id: c, title: 'C', status: 'draft' },
      { id: a, title: 'A', status: 'draft' },
      { id: b, title: 'B', status: 'published' },
    ]);
    for (const x of got.body.data.courses) {
      const { screens: _content, ...summary } = (await req<CourseDto>('GET', `/courses/${x.id}`)).body.data;
      expect(x).to.deep.equal(summary);
    }
    const list = await req<CollectionDto[]>('GET', '/collections');
    expect(list.body.data.find((x) => x.id === id)!.courses.map((x) => x.id)).to.deep.equal([c, a, b]);
  });

  it('adding a course that is already in the collection is idempotent: 200, position unchanged', async () => {
    const { req, course, collection, order } = await workspace('build');
    const a = await course('A');
    const b = await course('B');
    const id = await collection();
    await req('POST', `/collections/${id}/courses`, { courseId: a });
    await req('POST', `/collections/${id}/courses`, { courseId: b });
    const again = await req<CollectionDto>('POST', `/collections/${id}/courses`, { courseId: a });
    expectStatus(again, 200);
    expect(again.body.data.courses.map((x) => x.title)).to.deep.equal(['A', 'B']);
    expect(await order(id)).to.deep.equal(['A', 'B']);
  });

  it('a course may be in several collections', async () => {
    const { req, course, collection, order } = await workspace('build');
    const a = await course('A');
    const one = await collection('one');
    const two = await collection('two');
    expectStatus(await req('POST', `/collections/${one}/courses`, { courseId: a }), 201);
    expectStatus(await req('POST', `/collections/${two}/courses`, { courseId: a }), 201);
    expect(await order(one)).to.deep.equal(['A']);
    expect(await order(two)).to.deep.equal(['A']);
  });

  it('direction -1 / 1 moves one step; first up and last down are no-ops; anything else is a 400', async () => {
    const { req, course, collection, order } = await workspace('build');
    const ids: Record<string, string> = {};
    for (const t of ['A', 'B', 'C', 'D']) ids[t] = await course(t);
    const id = await collection();
    for (const t of ['A', 'B', 'C', 'D'])
      await req('POST', `/collections/${id}/courses`, { courseId: ids[t] });

    const move = (t: string, direction: unknown) =>
      req<CollectionDto>('PATCH', `/collections/${id}/courses/${ids[t]}`, { direction });
    let res = await move('C', -1);
    expectStatus(res, 200);
    expect(res.body.data.courses.map((c) => c.title)).to.deep.equal(['A', 'C', 'B', 'D']);
    res = await move('A', 1);
    expect(res.body.data.courses.map((c) => c.title)).to.deep.equal(['C', 'A', 'B', 'D']);
    res = await move('C', -1);
    expectStatus(res, 200);
    expect(res.body.data.courses.map((c) => c.title)).to.deep.equal(['C', 'A', 'B', 'D']);
    res = await move('D', 1);
    expectStatus(res, 200);
    expect(res.body.data.courses.map((c) => c.title)).to.deep.equal(['C', 'A', 'B', 'D']);
    res = await move('D', -1);
    expect(res.body.data.courses.map((c) => c.title)).to.deep.equal(['C', 'A', 'D', 'B']);
    expect(await order(id)).to.deep.equal(['C', 'A', 'D', 'B']);

    for (const bad of [0, 2, -2, 0.5, '1', '-1', null, true]) {
      expectIssue(await move('A', bad), ['direction']);
    }
    expectIssue(await req('PATCH', `/collections/${id}/courses/${ids.A}`, {}), ['direction']);
    expect(await order(id)).to.deep.equal(['C', 'A', 'D', 'B']);

    // An added course goes after the reordered ones.
    const e = await course('E');
    await req('POST', `/collections/${id}/courses`, { courseId: e });
    expect(await order(id)).to.deep.equal(['C', 'A', 'D', 'B', 'E']);
  });

  it('moving or removing a course that is not in the collection → 404', async () => {
    const { req, course, collection } = await workspace('build');
    const a = await course('A');
    const outsider = await course('Outsider');
    const id = await collection();
    await req('POST', `/collections/${id}/courses`, { courseId: a });
    expectNotFound(await req('PATCH', `/collections/${id}/courses/${outsider}`, { direction: 1 }));
    expectNotFound(await req('DELETE', `/collections/${id}/courses/${outsider}`));
    expectNotFound(await req('PATCH', `/collections/${id}/courses/crs_nope`, { direction: 1 }));
  });

  it('remove takes the course out (204) and keeps the course itself', async () => {
    const { req, course, collection, order } = await workspace('build');
    const a = await course('A');
    const b = await course('B');
    const c = await course('C');
    const id = await collection();
    for (const x of [a, b, c]) await req('POST', `/collections/${id}/courses`, { courseId: x });
    const res = await req('DELETE', `/collections/${id}/courses/${b}`);
    expect(res.status).to.equal(204);
    expect(res.text).to.equal('');
    expect(await order(id)).to.deep.equal(['A', 'C']);
    expectStatus(await req('GET', `/courses/${b}`), 200);
    // It can come back, at the end.
    expectStatus(await req('POST', `/collections/${id}/courses`, { courseId: b }), 201);
    expect(await order(id)).to.deep.equal(['A', 'C', 'B']);
  });

  it('deleting a collection keeps its courses', async () => {
    const { req, course, collection } = await workspace('build');
    const a = await course('A');
    const id = await collection();
    await req('POST', `/collections/${id}/courses`, { courseId: a });
    expectStatus(await req('DELETE', `/collections/${id}`), 204);
    expectStatus(await req('GET', `/courses/${a}`), 200);
  });

  it('a deleted course leaves every collection', async () => {
    const { req, course, collection, order } = await workspace('build');
    const a = await course('A');
    const b = await course('B');
    const one = await collection('one');
    const two = await collection('two');
    for (const col of [one, two])
      for (const x of [a, b]) await req('POST', `/collections/${col}/courses`, { courseId: x });
    expectStatus(await req('DELETE', `/courses/${a}`), 204);
    expect(await order(one)).to.deep.equal(['B']);
    expect(await order(two)).to.deep.equal(['B']);
    const list = await req<CollectionDto[]>('GET', '/collections');
    for (const c of list.body.data) expect(c.courses.map((x) => x.id)).to.deep.equal([b]);
    // Moves still work on what is left.
    expectStatus(await req('PATCH', `/collections/${one}/courses/${b}`, { direction: -1 }), 200);
  });

  it('a course title or status change shows in the collection', async () => {
    const { req, course, collection } = await workspace('build');
    const a = await course('Old');
    const id = await collection();
    await req('POST', `/collections/${id}/courses`, { courseId: a });
    await req('PATCH', `/courses/${a}`, { title: 'New', status: 'published' });
    const [member] = (await req<CollectionDto>('GET', `/collections/${id}`)).body.data.courses;
    expect(member).to.include({ id: a, title: 'New', status: 'published' });
  });

  it("a course of another workspace (or none) cannot be added: 400 with the path ['courseId']", async () => {
    const a = await workspace('build', 'A');
    const b = await workspace('build', 'B');
    const theirs = await b.course('Theirs');
    const id = await a.collection();
    expectIssue(
      await a.req('POST', `/collections/${id}/courses`, { courseId: theirs }),
      ['courseId'],
      'unknown_reference',
    );
    expectIssue(
      await a.req('POST', `/collections/${id}/courses`, { courseId: 'crs_nope' }),
      ['courseId'],
      'unknown_reference',
    );
    expect(await a.order(id)).to.deep.equal([]);
  });

  it("another workspace's collection is a 404 on every :id route", async () => {
    const a = await workspace('build', 'A');
    const b = await workspace('build', 'B');
    const mine = await a.course('Mine');
    const id = await a.collection('Mine');
    await a.req('POST', `/collections/${id}/courses`, { courseId: mine });
    const theirs = await b.course('Theirs');
    expectNotFound(await b.req('GET', `/collections/${id}`));
    expectNotFound(await b.req('PATCH', `/collections/${id}`, { name: 'Stolen' }));
    expectNotFound(await b.req('DELETE', `/collections/${id}`));
    expectNotFound(await b.req('POST', `/collections/${id}/courses`, { courseId: theirs }));
    expectNotFound(await b.req('PATCH', `/collections/${id}/courses/${mine}`, { direction: 1 }));
    expectNotFound(await b.req('DELETE', `/collections/${id}/courses/${mine}`));
    expect((await b.req<CollectionDto[]>('GET', '/collections')).body.data).to.deep.equal([]);
    const still = await a.req<CollectionDto>('GET', `/collections/${id}`);
    expect(still.body.data).to.deep.include({ name: 'Mine' });
    expect(still.body.data.courses.map((c) => c.id)).to.deep.equal([mine]);
  });

  it('concurrent adds to one collection all land, each at its own position', async () => {
    const { req, course, collection, order } = await workspace('build');
    const titles = ['A', 'B', 'C', 'D', 'E', 'F'];
    const ids = [];
    for (const t of titles) ids.push(await course(t));
    const id = await collection();
    const results = await Promise.all(
      ids.map((courseId) => req('POST', `/collections/${id}/courses`, { courseId })),
    );
    for (const r of results) expectStatus(r, 201);
    const got = await order(id);
    expect([...got].sort()).to.deep.equal(titles);
    // Every course has a distinct place: moving each one step keeps the set intact.
    const moved = await req<CollectionDto>('PATCH', `/collections/${id}/courses/${ids[0]}`, { direction: 1 });
    expect(moved.body.data.courses).to.have.length(6);
  });
});
