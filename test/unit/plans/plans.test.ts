import { expect } from 'chai';
import { AppError, HTTP_ERRORS } from '@lectern/errors';
import {
  FEATURE_PLAN,
  PLANS,
  PLAN_NAMES,
  checkAccess,
  checkCourseCeiling,
  checkScreenCeiling,
  generationAllowance,
  isPlanName,
  planAtLeast,
  requireFeature,
  usageMonth,
  type Feature,
  type PlanName,
} from '@lectern/plans';

const GB = 1024 ** 3;

function thrown(fn: () => void): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}

describe('plans: the SPEC plan table as data', () => {
  it('has the four plans, in rank order', () => {
    expect(PLAN_NAMES).to.deep.equal(['sandbox', 'build', 'scale', 'partner']);
    expect(PLAN_NAMES.map((p) => PLANS[p].label)).to.deep.equal(['Sandbox', 'Build', 'Scale', 'Partner']);
    expect(planAtLeast('sandbox', 'build')).to.equal(false);
    expect(planAtLeast('build', 'build')).to.equal(true);
    expect(planAtLeast('partner', 'scale')).to.equal(true);
    expect(planAtLeast('scale', 'partner')).to.equal(false);
    expect(isPlanName('scale')).to.equal(true);
    expect(isPlanName('platinum')).to.equal(false);
    expect(isPlanName('toString')).to.equal(false);
  });

  it('ceilings: 3 courses and 30 screens on Sandbox, unbounded on paid plans', () => {
    expect(PLANS.sandbox).to.include({ maxCourses: 3, maxScreensPerCourse: 30 });
    for (const p of ['build', 'scale', 'partner'] as PlanName[])
      expect(PLANS[p]).to.include({ maxCourses: null, maxScreensPerCourse: null });
  });

  it('storage: Sandbox 1GB, Build 50GB, Scale 500GB', () => {
    expect(PLANS.sandbox.storageBytes).to.equal(1 * GB);
    expect(PLANS.build.storageBytes).to.equal(50 * GB);
    expect(PLANS.scale.storageBytes).to.equal(500 * GB);
  });

  it('monthly allowances: views and generations; only Sandbox is hard-capped', () => {
    expect(PLAN_NAMES.map((p) => PLANS[p].monthlyViews)).to.deep.equal([500, 25_000, 150_000, 1_000_000]);
    expect(PLAN_NAMES.map((p) => generationAllowance(p))).to.deep.equal([5, 100, 500, null]);
    expect(PLAN_NAMES.filter((p) => PLANS[p].hardCapViews)).to.deep.equal(['sandbox']);
  });

  it('features: generation from Build; themes, translations, certificate templates and SCORM over the API from Scale', () => {
    expect(FEATURE_PLAN).to.deep.equal({
      generation: 'build',
      themes: 'scale',
      translations: 'scale',
      certificate_templates: 'scale',
      scorm_api: 'scale',
    });
  });
});

describe('plans: requireFeature', () => {
  const features = Object.keys(FEATURE_PLAN) as Feature[];

  it('passes on the needed plan and every plan above it', () => {
    for (const f of features) {
      for (const p of PLAN_NAMES.filter((x) => planAtLeast(x, FEATURE_PLAN[f])))
        expect(() => requireFeature(p, f), `${p} ${f}`).to.not.throw();
    }
  });

  it('throws 403 plan_required naming the plan needed on every plan below it', () => {
    for (const f of features) {
      for (const p of PLAN_NAMES.filter((x) => !planAtLeast(x, FEATURE_PLAN[f]))) {
        const err = thrown(() => requireFeature(p, f));
        expect(err.code).to.equal('plan_required');
        expect(HTTP_ERRORS[err.code]).to.deep.equal({ status: 403, error: 'plan_required' });
        const needed = PLANS[FEATURE_PLAN[f]].label;
        expect(err.message, `${p} ${f}`).to.include(needed);
        expect(err.details).to.deep.include({ requiredPlan: FEATURE_PLAN[f] });
      }
    }
    expect(thrown(() => requireFeature('sandbox', 'generation')).message).to.match(/Build/);
    expect(thrown(() => requireFeature('build', 'themes')).message).to.match(/Scale/);
  });
});

describe('plans: ceilings', () => {
  it('courses: Sandbox may create up to 3; the 4th needs Build', () => {
    for (const n of [0, 1, 2]) expect(() => checkCourseCeiling('sandbox', n)).to.not.throw();
    const err = thrown(() => checkCourseCeiling('sandbox', 3));
    expect(err.code).to.equal('plan_required');
    expect(HTTP_ERRORS[err.code].status).to.equal(403);
    expect(err.message).to.include('Build');
    expect(() => checkCourseCeiling('sandbox', 10)).to.throw(AppError);
    for (const p of ['build', 'scale', 'partner'] as PlanName[])
      expect(() => checkCourseCeiling(p, 100_000)).to.not.throw();
  });

  it('screens: a write taking a Sandbox course past 30 is refused naming Build', () => {
    expect(() => checkScreenCeiling('sandbox', 0, 30)).to.not.throw();
    expect(() => checkScreenCeiling('sandbox', 29, 30)).to.not.throw();
    for (const [before, after] of [
      [30, 31],
      [0, 31],
      [10, 100],
    ]) {
      const err = thrown(() => checkScreenCeiling('sandbox', before, after));
      expect(err.code).to.equal('plan_required');
      expect(err.message).to.include('Build');
    }
  });

  it('screens: a course already over the line after a downgrade stays editable', () => {
    expect(() => checkScreenCeiling('sandbox', 45, 45), 'same count').to.not.throw();
    expect(() => checkScreenCeiling('sandbox', 45, 40), 'fewer').to.not.throw();
    expect(() => checkScreenCeiling('sandbox', 45, 31), 'fewer, still over').to.not.throw();
    expect(() => checkScreenCeiling('sandbox', 45, 46), 'adding one more is refused').to.throw(AppError);
  });

  it('screens: paid plans are unbounded', () => {
    for (const p of ['build', 'scale', 'partner'] as PlanName[])
      expect(() => checkScreenCeiling(p, 0, 10_000)).to.not.throw();
  });
});

describe('plans: checkAccess (the 402 rules)', () => {
  const now = new Date('2026-11-21T12:00:00.000Z');
  const ws = (plan: PlanName, billing: { status?: 'ok' | 'past_due'; graceUntil?: Date | null } = {}) => ({
    plan,
    billingStatus: billing.status ?? 'ok',
    graceUntil: billing.graceUntil ?? null,
  });

  it('Sandbox: 499 views pass, 500 and more are 402 plan_required', () => {
    expect(() => checkAccess({ workspace: ws('sandbox'), viewsThisMonth: 499 }, now)).to.not.throw();
    for (const views of [500, 501, 10_000]) {
      const err = thrown(() => checkAccess({ workspace: ws('sandbox'), viewsThisMonth: views }, now));
      expect(HTTP_ERRORS[err.code]).to.deep.equal({ status: 402, error: 'plan_required' });
    }
  });

  it('paid plans are never cut off for overage', () => {
    for (const p of ['build', 'scale', 'partner'] as PlanName[])
      expect(() => checkAccess({ workspace: ws(p), viewsThisMonth: 50_000_000 }, now)).to.not.throw();
  });

  it('past due: fine within the grace period, 402 once it has ended, fine again when paid', () => {
    const future = new Date(now.getTime() + 1000);
    const past = new Date(now.getTime() - 1000);
    expect(() =>
      checkAccess(
        { workspace: ws('scale', { status: 'past_due', graceUntil: future }), viewsThisMonth: 0 },
        now,
      ),
    ).to.not.throw();
    for (const plan of PLAN_NAMES) {
      const err = thrown(() =>
        checkAccess(
          { workspace: ws(plan, { status: 'past_due', graceUntil: past }), viewsThisMonth: 0 },
          now,
        ),
      );
      expect(HTTP_ERRORS[err.code].status).to.equal(402);
      expect(HTTP_ERRORS[err.code].error).to.equal('plan_required');
    }
    expect(
      () =>
        checkAccess(
          { workspace: ws('scale', { status: 'past_due', graceUntil: now }), viewsThisMonth: 0 },
          now,
        ),
      'the grace ends at its instant',
    ).to.throw(AppError);
    expect(
      () =>
        checkAccess({ workspace: ws('scale', { status: 'ok', graceUntil: past }), viewsThisMonth: 0 }, now),
      'paid',
    ).to.not.throw();
  });
});

describe('plans: usageMonth', () => {
  it('is the calendar month in UTC', () => {
    expect(usageMonth(new Date('2026-11-21T12:00:00Z'))).to.equal('2026-11');
    expect(usageMonth(new Date('2026-11-30T23:30:00-05:00'))).to.equal('2026-12');
    expect(usageMonth(new Date('2027-01-01T00:30:00+01:00'))).to.equal('2026-12');
  });
});
