// Which built-in extensions a workspace's code-server starts with: the trimmed set scripts/setup-editor-extensions.sh
// links beside code-server in the tools directory (editor/built-in-extensions.txt), unless the workspace asks for all
// of code-server's own (docs/runtime.md, "Built-in extensions"). Fewer extensions, less for code-server to scan and
// send and for the workbench to take in before it lists the folder.
import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** The trimmed set's directory, in the tools directory beside code-server's package (node_modules/code-server). */
export const TRIMMED_BUILTIN_EXTENSIONS = 'code-server-builtin-extensions';
/** A file of this name in code-server's data directory (the volume's .svc/code-server) asks for every built-in extension. */
export const ALL_BUILTIN_EXTENSIONS_MARK = 'all-built-in-extensions';

/** code-server's arguments for its built-in extensions: the trimmed set when it is installed and wanted, else none (all). */
export function builtInExtensionsArgs(packageDir: string, dataDir: string, argv: string[]): string[] {
  if (argv.some((arg) => arg === '--builtin-extensions-dir' || arg.startsWith('--builtin-extensions-dir='))) return [];
  const trimmed = path.join(packageDir, '..', '..', TRIMMED_BUILTIN_EXTENSIONS);
  if (!existsSync(trimmed) || existsSync(path.join(dataDir, ALL_BUILTIN_EXTENSIONS_MARK))) return [];
  // The name is a link that setup swaps; VS Code's scanner lists nothing under a link, so it gets the directory itself.
  return ['--builtin-extensions-dir', realpathSync(trimmed)];
}
