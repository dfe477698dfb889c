// Who a workspace's pods say their user is (spec 2.3, docs/workspaces.md "Who you are in a workspace"): the
// workspace UID gets a passwd and a group entry named after the person (a login name derived from their e-mail),
// HOME on the volume outside the code, bash as its shell, and the pod's host name is the workspace's name. Pure:
// the driver writes what these answer beside the pod and binds them over /etc/passwd and /etc/group.
import type { WorkspaceUser as PodUser } from '../driver.ts';

/** Where the pods of a workspace see its volume: the code at /data/app, HOME at /data/home, svc's own files at /data/.svc. */
export const POD_VOLUME_DIR = '/data';
export const POD_HOME_DIR = '/data/home';

export interface IdentityEntry {
  uid: number;
  user: PodUser;
  home: string;
  shell: string;
}

const linesOf = (file: string) => file.split('\n').filter((line) => line.length > 0);
const nameOf = (line: string) => line.split(':')[0];

/**
 * The login name the entry takes in `passwd`: the person's, or with a number after it when the base system has that
 * name for another UID already (`root@example.com` never becomes root).
 */
export function freeLogin(passwd: string, uid: number, login: string): string {
  const taken = new Set(linesOf(passwd).filter((line) => line.split(':')[2] !== String(uid)).map(nameOf));
  if (!taken.has(login)) return login;
  for (let n = 2; ; n++) if (!taken.has(`${login}${n}`.slice(-32))) return `${login}${n}`.slice(-32);
}

/** The base system's passwd with the entry for the workspace UID (any line it had for that UID replaced). */
export function passwdWithUser(base: string, entry: IdentityEntry, login = freeLogin(base, entry.uid, entry.user.login)): string {
  const kept = linesOf(base).filter((line) => line.split(':')[2] !== String(entry.uid) && nameOf(line) !== login);
  const root = kept.some((line) => line.split(':')[2] === '0') || entry.uid === 0 ? [] : ['root:x:0:0:root:/root:/sbin/nologin'];
  return [...root, ...kept, `${login}:x:${entry.uid}:0:${entry.user.fullName}:${entry.home}:${entry.shell}`].join('\n') + '\n';
}

/**
 * The base system's group file with a group of the person's name at the workspace UID and the person a member of
 * group 0, which pods run with (files of the volume are group 0's, so the person's own processes share them).
 */
export function groupWithUser(base: string, uid: number, login: string): string {
  const lines = linesOf(base).filter((line) => line.split(':')[2] !== String(uid) && nameOf(line) !== login);
  const withRoot = lines.some((line) => line.split(':')[2] === '0') ? lines : ['root:x:0:', ...lines];
  const member = withRoot.map((line) => {
    const parts = line.split(':');
    if (parts[2] !== '0') return line;
    const members = (parts[3] ?? '').split(',').filter(Boolean);
    return [...parts.slice(0, 3), [...members.filter((name) => name !== login), login].join(',')].join(':');
  });
  return [...member, `${login}:x:${uid}:`].join('\n') + '\n';
}

/** The environment a login knows itself by. */
export function identityEnv(entry: IdentityEntry, login: string): Record<string, string> {
  return { HOME: entry.home, USER: login, LOGNAME: login, SHELL: entry.shell };
}
