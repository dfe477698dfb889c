// The texts of the platform's own (`system`) lines in a service's log (spec 3.2, rules from the service log), in one
// place so the API, the console and the tests say exactly the same.

/** A duration as Go prints it: `5m0s`, `2m0s`, `1m30s`, `10s`, `1.5s`, `500ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

export const serviceLogTexts = {
  // rule 1: needs
  needWaiting: (name: string, timeoutMs: number) => `Waiting for ${name} (up to ${formatDuration(timeoutMs)})`,
  needAnswered: (name: string) => `${name} answered, starting`,
  needTimedOut: (name: string, timeoutMs: number) => `${name} did not answer within ${formatDuration(timeoutMs)}, starting anyway`,
  needFailing: (name: string) => `Not waiting any more for ${name} because the needed service is failing`,
  // rules 2 to 5
  stepStarting: (number: number, count: number, name: string | undefined) => `Step ${number}/${count}${name ? `: ${name}` : ''}`,
  serverStarting: (name: string | undefined) => `Starting the server${name ? `: ${name}` : ''}`,
  stepFailed: (code: number) => `Step exited with code ${code}`,
  restarting: (code: number, delayMs: number) => `Server exited with code ${code}; restarting in ${formatDuration(delayMs)}`,
  givingUp: (code: number, failures: number, windowMs: number) => `Giving up: exited with ${code}; ${failures} failures in ${formatDuration(windowMs)}`,
  finished: 'The server exited with code 0: the service finished',
  noSteps: 'The service has no steps to run',
  // rule 6
  commandMissing: 'Exit code 127: the command is missing from the image',
  notExecutable: 'Exit code 126: the file is not executable for the workspace user (its UID, group 0)',
  stepsImage: (image: string, digest: string, shell: string) => `Running the steps in image ${image} (${digest}) with ${shell}`,
  imageUser: (imageUser: string, uid: number) =>
    `${expectedUser(imageUser)}; here it runs as UID ${uid} with group 0 and its files are read-only: what it writes must be ` +
    'in /tmp, /run, /var/tmp or a mount, and writable by group 0 (or a cluster administrator allows the team runAsUser)',
  // limits of the plan (src/runtime/local/cgroups.ts)
  memoryKilled: (plan: string, limitMiB: number) =>
    `Out of memory: killed for using more than the ${limitMiB >= 1024 && limitMiB % 1024 === 0 ? `${limitMiB / 1024} GiB` : `${limitMiB} MiB`} of memory that plan ${plan} allows`,
  // container services
  containerStarting: (argv: string[], image: string, digest: string) => `Starting ${argv.join(' ')} (image ${image}, ${digest})`,
  workingDirMissing: (dir: string) => `The working directory ${dir} does not exist in the image`,
} as const;

function expectedUser(imageUser: string): string {
  if (imageUser === '') return 'The image names no user, so elsewhere it runs as root';
  if (/^(root|0)(:|$)/.test(imageUser)) return 'The image expects to run as root';
  return `The image expects to run as user ${imageUser}`;
}
