// svc.yml help in code-server: starts the YAML language server (the npm package yaml-language-server, the server of
// Red Hat's YAML extension) with svc.yml and svc.*.yml associated to the svc.yml JSON Schema that
// scripts/setup-editor.sh wrote beside this file from the same source the API serves (src/landscape/schema.ts).
// A `# yaml-language-server: $schema=URL` first line (svc init writes it) names a console's served schema instead.
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');
const { configurationAnswer, yamlSettings } = require('./settings.cjs');

let client;

async function activate(context) {
  const schemaUri = pathToFileURL(path.join(context.extensionPath, 'svc.schema.json')).href;
  const settings = yamlSettings(schemaUri);
  const server = { module: require.resolve('yaml-language-server/bin/yaml-language-server'), transport: TransportKind.ipc };
  client = new LanguageClient('svc-yaml', 'svc.yml', { run: server, debug: server }, {
    documentSelector: [{ language: 'yaml' }],
    middleware: {
      workspace: {
        // the server pulls its `yaml` section: the person's settings, with the svc schema association added
        configuration: async (params, token, next) => configurationAnswer(params.items, await next(params, token), settings),
      },
    },
  });
  await client.start();
  await client.sendNotification('workspace/didChangeConfiguration', { settings: null }); // the server pulls them now
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
