// Rules for the paths of a landscape beyond their patterns: route prefixes, health-check paths and mount
// sources.

/** Why a route path (already matching its pattern) is not a clean path prefix, or undefined. */
export function routePathProblem(path: string): string | undefined {
  if (path.length > 1 && path.endsWith('/')) return `ends with /; write ${path.replace(/\/+$/, '') || '/'} (a route matches whole segments)`;
  if (path.includes('//')) return 'has an empty segment (//)';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) return 'has a . or .. segment';
  return percentProblem(path);
}

const healthCharacters = /^[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/;

/** Why a health-check path (starting with /) cannot be requested, or undefined. */
export function healthPathProblem(path: string): string | undefined {
  if (!healthCharacters.test(path)) return 'has characters a URL path cannot hold, such as spaces or #; escape them as %20 and the like';
  return percentProblem(path);
}

function percentProblem(path: string): string | undefined {
  return /%(?![0-9A-Fa-f]{2})/.test(path) ? 'has a % that does not start an escape such as %20' : undefined;
}

/** Whether a path relative to /data/app leaves it through `..` segments. */
export function leavesAppDirectory(path: string): boolean {
  let depth = 0;
  for (const segment of path.split('/')) {
    if (segment === '..') depth--;
    else if (segment !== '' && segment !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}
