// The plan a request names, or the installation's default; a name that is no plan of the installation is invalid
// input pointing at the field (a service's plan in svc.yml is checked with the file: landscape/semantics.ts).
import { listWords, quote } from '../landscape/index.ts';
import { problem } from '../core/problems.ts';
import { workspacePlan, type InstallationPlans, type WorkspacePlan } from './plans.ts';

export function chosenWorkspacePlan(plans: InstallationPlans, named: string | undefined, pointer = '/plan'): WorkspacePlan {
  const id = named ?? plans.workspace.default;
  const plan = workspacePlan(plans, id);
  if (plan) return plan;
  const known = listWords(plans.workspace.plans.map((p) => p.id));
  throw problem('validation', 422, `${quote(id)} is not a workspace plan of this installation; choose ${known}.`, {
    errors: [{ pointer, message: `is not a workspace plan of this installation (${known})` }],
  });
}
