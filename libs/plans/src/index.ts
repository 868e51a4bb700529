import { AppError } from '@lectern/errors';
import type { PlanName, Workspace } from '@lectern/db';

export type { PlanName };

export interface Plan {
  name: PlanName;
  label: string;
  rank: number;
  /** null = unbounded. */
  maxCourses: number | null;
  maxScreensPerCourse: number | null;
  storageBytes: number | null;
  monthlyViews: number;
  monthlyGenerations: number | null;
  /** Only Sandbox is hard-capped on usage; paid plans pay for overage. */
  hardCapViews: boolean;
}

const GB = 1024 ** 3;

/** SPEC.md "Limits", "Plan features" and "Monthly allowances", as data. */
export const PLANS: Record<PlanName, Plan> = {
  sandbox: {
    name: 'sandbox',
    label: 'Sandbox',
    rank: 0,
    maxCourses: 3,
    maxScreensPerCourse: 30,
    storageBytes: 1 * GB,
    monthlyViews: 500,
    monthlyGenerations: 5,
    hardCapViews: true,
  },
  build: {
    name: 'build',
    label: 'Build',
    rank: 1,
    maxCourses: null,
    maxScreensPerCourse: null,
    storageBytes: 50 * GB,
    monthlyViews: 25_000,
    monthlyGenerations: 100,
    hardCapViews: false,
  },
  scale: {
    name: 'scale',
    label: 'Scale',
    rank: 2,
    maxCourses: null,
    maxScreensPerCourse: null,
    storageBytes: 500 * GB,
    monthlyViews: 150_000,
    monthlyGenerations: 500,
    hardCapViews: false,
  },
  partner: {
    name: 'partner',
    label: 'Partner',
    rank: 3,
    maxCourses: null,
    maxScreensPerCourse: null,
    storageBytes: null,
    monthlyViews: 1_000_000,
    monthlyGenerations: null,
    hardCapViews: false,
  },
};

export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

/** Features unlocked from a plan upward. */
export type Feature = 'generation' | 'themes' | 'translations' | 'certificate_templates' | 'scorm_api';

export const FEATURE_PLAN: Record<Feature, PlanName> = {
  generation: 'build',
  themes: 'scale',
  translations: 'scale',
  certificate_templates: 'scale',
  scorm_api: 'scale',
};

const FEATURE_LABEL: Record<Feature, string> = {
  generation: 'AI generation',
  themes: 'Themes',
  translations: 'Translations',
  certificate_templates: 'Certificate templates',
  scorm_api: 'SCORM import and export over the API',
};

export function isPlanName(v: string): v is PlanName {
  // Own keys only: `in` would also accept 'toString', 'constructor', …
  return Object.hasOwn(PLANS, v);
}

export function planAtLeast(plan: PlanName, min: PlanName): boolean {
  return PLANS[plan].rank >= PLANS[min].rank;
}

/** Throws 403 plan_required naming the plan needed. */
export function requireFeature(plan: PlanName, feature: Feature): void {
  const needed = FEATURE_PLAN[feature];
  if (!planAtLeast(plan, needed)) {
    throw new AppError(
      'plan_required',
      `${FEATURE_LABEL[feature]} needs the ${PLANS[needed].label} plan or higher (this workspace is on ${PLANS[plan].label})`,
      { details: { requiredPlan: needed } },
    );
  }
}

/** The lowest plan above `plan` that lifts a numeric ceiling. */
function nextPlanWithout(plan: PlanName, test: (p: Plan) => boolean): Plan {
  return PLAN_NAMES.map((n) => PLANS[n]).find((p) => p.rank > PLANS[plan].rank && test(p)) ?? PLANS.partner;
}

export function checkCourseCeiling(plan: PlanName, existingCourses: number): void {
  const max = PLANS[plan].maxCourses;
  if (max !== null && existingCourses >= max) {
    const up = nextPlanWithout(plan, (p) => p.maxCourses === null || p.maxCourses > max);
    throw new AppError(
      'plan_required',
      `The ${PLANS[plan].label} plan allows ${max} courses; creating more needs the ${up.label} plan`,
      { details: { requiredPlan: up.name, limit: max } },
    );
  }
}

/**
 * A write that takes a course past the screen ceiling is refused; a course already over
 * the line (after a downgrade) stays editable as long as the write adds no screens.
 */
export function checkScreenCeiling(plan: PlanName, before: number, after: number): void {
  const max = PLANS[plan].maxScreensPerCourse;
  if (max === null || after <= max || after <= before) return;
  const up = nextPlanWithout(plan, (p) => p.maxScreensPerCourse === null || p.maxScreensPerCourse > max);
  throw new AppError(
    'plan_required',
    `The ${PLANS[plan].label} plan allows ${max} screens per course; more needs the ${up.label} plan`,
    { details: { requiredPlan: up.name, limit: max } },
  );
}

/** Calendar month in UTC, the metering period: `2026-11`. */
export function usageMonth(at = new Date()): string {
  return at.toISOString().slice(0, 7);
}

export type Metric = 'views' | 'generations';

export interface AccessState {
  workspace: Pick<Workspace, 'plan' | 'billingStatus' | 'graceUntil'>;
  viewsThisMonth: number;
}

/**
 * 402 when the workspace may not use the service right now: a Sandbox workspace that spent
 * its monthly view allowance, or an unpaid invoice past its grace period.
 */
export function checkAccess(state: AccessState, now = new Date()): void {
  const { workspace } = state;
  if (
    workspace.billingStatus === 'past_due' &&
    workspace.graceUntil &&
    workspace.graceUntil.getTime() <= now.getTime()
  ) {
    throw new AppError(
      'plan_blocked',
      'Payment is overdue and the grace period has ended; service resumes as soon as the invoice is paid',
    );
  }
  const plan = PLANS[workspace.plan];
  if (plan.hardCapViews && state.viewsThisMonth >= plan.monthlyViews) {
    throw new AppError(
      'plan_blocked',
      `The ${plan.label} plan's ${plan.monthlyViews} course views for ${usageMonth(now)} are used up; upgrade to Build or wait for the next month (UTC)`,
    );
  }
}

export function generationAllowance(plan: PlanName): number | null {
  return PLANS[plan].monthlyGenerations;
}
