// `npm run sdk`: writes the SDK's generated files (sdk/openapi.yaml, sdk/src/generated/openapi.ts) from the routes'
// schemas, without a server or database. `--check` writes nothing and fails when the checked-in files are stale.
import { openApiDocument } from '../src/api/openapi-document.ts';
import { generateSdkFiles, SDK_DIR, staleSdkFiles, writeSdkFiles } from './sdk/generate.ts';

const files = await generateSdkFiles(await openApiDocument());
if (process.argv.includes('--check')) {
  const stale = await staleSdkFiles(SDK_DIR, files);
  if (stale.length > 0) {
    console.error(`sdk: ${stale.map((name) => `sdk/${name}`).join(', ')} differ from the routes' document; run npm run sdk`);
    process.exit(1);
  }
  console.log('sdk: up to date');
} else {
  await writeSdkFiles(SDK_DIR, files);
  console.log(`sdk: wrote ${Object.keys(files).map((name) => `sdk/${name}`).join(', ')}`);
}
