// The landscape file on a local volume. The server runs as root and the file belongs to the workspace, so a link
// must never be followed (svc.yml -> /etc/shadow): the file is opened with O_NOFOLLOW, at the root of the volume's code (app/) only.
import { constants } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import path from 'node:path';
import { isProfileName, profileOfFileName } from '../../landscape/index.ts';
import type { WorkspaceRef } from '../driver.ts';
import { volumeAppDir } from './volume-layout.ts';
import { LANDSCAPE_FILE_LIMIT, type LandscapeFileRead, type WorkspaceFiles } from '../workspace-files.ts';

export function createLocalWorkspaceFiles(options: { dataDir: string }): WorkspaceFiles {
  return {
    async readLandscapeFile(workspace: WorkspaceRef, fileName: string): Promise<LandscapeFileRead> {
      const profile = profileOfFileName(fileName);
      if (profile === undefined || (profile !== null && !isProfileName(profile))) {
        return { state: 'unreadable', reason: `${fileName} is not a landscape file name` };
      }
      const volume = path.join(path.resolve(options.dataDir), 'volumes', String(workspace.id));
      const codeDir = volumeAppDir(volume);
      // the workspace can replace its app directory by a link while no pod runs: never followed either
      if ((await lstat(codeDir).catch(() => undefined))?.isSymbolicLink()) return { state: 'unreadable', reason: '/data/app is a symbolic link; svc reads only a directory' };
      let handle;
      try {
        handle = await open(path.join(codeDir, fileName), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          return (await open(volume, constants.O_RDONLY).then((h) => h.close().then(() => true), () => false))
            ? { state: 'missing' }
            : { state: 'no-volume' };
        }
        if (code === 'ELOOP') return { state: 'unreadable', reason: `${fileName} is a symbolic link; svc reads only a plain file` };
        return { state: 'unreadable', reason: `${fileName} cannot be read (${code})` };
      }
      try {
        const info = await handle.stat();
        if (!info.isFile()) return { state: 'unreadable', reason: `${fileName} is not a plain file` };
        if (info.size > LANDSCAPE_FILE_LIMIT) {
          return { state: 'unreadable', reason: `${fileName} is larger than 4 MiB (${info.size} bytes); svc reads landscape files up to ${LANDSCAPE_FILE_LIMIT} bytes`, limitBytes: LANDSCAPE_FILE_LIMIT };
        }
        const buffer = await handle.readFile();
        const text = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
        return { state: 'found', text };
      } catch (error) {
        if (error instanceof TypeError) return { state: 'unreadable', reason: `${fileName} is not UTF-8 text` };
        throw error;
      } finally {
        await handle.close();
      }
    },
  };
}
