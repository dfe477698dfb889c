// The YAML language server's settings for svc: svc.yml and its profiles (svc.<profile>.yml) associated to the
// svc.yml JSON Schema, no schema store (installations reach only their own network). Shared by the extension and
// test/editor-yaml.test.ts, which runs the language server with exactly these settings.
'use strict';

/** File patterns of landscape files: `svc.yml` and the profiles `svc.<profile>.yml`, in any folder. */
const svcFilePatterns = ['**/svc.yml', '**/svc.*.yml'];

/** `settings.yaml` for workspace/didChangeConfiguration and workspace/configuration, with the schema at `schemaUri`. */
function yamlSettings(schemaUri) {
  return {
    validate: true,
    hover: true,
    completion: true,
    format: { enable: true },
    schemaStore: { enable: false },
    schemas: { [schemaUri]: svcFilePatterns },
  };
}

/**
 * The answer to the server's workspace/configuration request (it pulls `yaml`, `http`, `[yaml]`, `editor`): what the
 * editor answered, with the svc settings and schema association added to the `yaml` section.
 */
function configurationAnswer(items, answers, settings) {
  return items.map((item, index) => {
    if (item.section !== 'yaml') return answers[index] === undefined ? null : answers[index];
    const own = answers[index] && typeof answers[index] === 'object' ? answers[index] : {};
    return { ...own, ...settings, schemas: { ...(own.schemas || {}), ...settings.schemas } };
  });
}

module.exports = { svcFilePatterns, yamlSettings, configurationAnswer };
