// What the landscape-check worker computes for one file: the checked file, its normal form and, when asked,
// the plan from the deployed landscape to it. Pure; landscape-checker.ts runs it off the event loop.
import { normalizeLandscape, parseLandscape, planLandscape, type LandscapeError, type LandscapePlan, type NormalLandscape } from '../landscape/index.ts';

export interface LandscapeCheckRequest {
  text: string;
  /** The deployed landscape to plan from (null: nothing deployed); no plan is made when absent. */
  previous?: NormalLandscape | null;
}

export type LandscapeCheck =
  | { state: 'checked'; errors: LandscapeError[]; omitted: number; normal?: NormalLandscape; plan?: LandscapePlan }
  /** Checking took longer than the budget, or more memory than a check may use; the check was stopped. */
  | { state: 'too-complex'; budgetMs: number };

export function checkLandscapeText(request: LandscapeCheckRequest): LandscapeCheck {
  const parsed = parseLandscape(request.text);
  if (!parsed.landscape) return { state: 'checked', errors: parsed.errors, omitted: parsed.omitted };
  const normal = normalizeLandscape(parsed.landscape);
  const plan = request.previous === undefined ? undefined : planLandscape(request.previous, normal);
  return { state: 'checked', errors: parsed.errors, omitted: parsed.omitted, normal, plan };
}
