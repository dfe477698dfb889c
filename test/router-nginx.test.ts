// The router's end-to-end cases (test/router.test.ts) again with nginx in front as the data plane
// (--data-plane nginx): behaviour must be the same. Skipped when nginx is not installed.
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

const nginxInstalled = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v nginx || ls /usr/sbin/nginx'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

if (nginxInstalled) {
  process.env.SVC_DATA_PLANE = 'nginx';
  await import('./router.test.ts');
} else {
  test('the router with the nginx data plane', { skip: 'nginx is not installed (apt-get install nginx)' }, () => undefined);
}
