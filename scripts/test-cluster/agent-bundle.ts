// Prints the directory of the agent bundle as the local driver builds it (src/runtime/local/agent-bundle.ts), staged
// under the data directory given as the first argument: scripts/test-cluster/images.sh puts it in the agent image.
// Run with `node --import tsx`; its name ends in the bundle's content hash (agent-<hash>).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stageAgentBundle } from '../../src/runtime/local/agent-bundle.ts';

const dataDir = process.argv[2];
if (!dataDir) {
  process.stderr.write('usage: agent-bundle.ts DATA_DIR\n');
  process.exit(2);
}
const projectDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
process.stdout.write(`${await stageAgentBundle(projectDir, path.resolve(dataDir))}\n`);
