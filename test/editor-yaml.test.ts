// svc.yml help in the editor: the YAML language server (the npm package code-server's svc-yaml extension starts,
// editor/svc-yaml) with the extension's own settings gives errors, hover docs and completion from the svc.yml JSON
// Schema for svc.yml and svc.<profile>.yml, and leaves other YAML files alone.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import { svcSchema } from '../src/landscape/schema.ts';
import { LspClient } from './helpers/lsp.ts';

const require = createRequire(import.meta.url);
const { yamlSettings, configurationAnswer } = require('../editor/svc-yaml/settings.cjs') as {
  yamlSettings: (uri: string) => object;
  configurationAnswer: (items: Array<{ section?: string }>, answers: unknown[], settings: object) => unknown[];
};
const server = require.resolve('yaml-language-server/bin/yaml-language-server');

const file = `schema: svc/v1
services:
  web:
    type: steps
    replicas: 0
    imagee: node
    steps:
      - run: npm start
`;

let dir: string;
let lsp: LspClient;
let version = 0;

function open(name: string, text: string): string {
  const uri = pathToFileURL(path.join(dir, name)).href;
  lsp.notify('textDocument/didOpen', { textDocument: { uri, languageId: 'yaml', version: ++version, text } });
  return uri;
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'svc-editor-yaml-'));
  const schemaFile = path.join(dir, 'svc.schema.json');
  await writeFile(schemaFile, JSON.stringify(svcSchema));
  const settings = yamlSettings(pathToFileURL(schemaFile).href);
  // the server pulls its settings; answered as the extension's middleware does, over an editor with none of its own
  lsp = new LspClient(process.execPath, [server, '--stdio'], {
    'workspace/configuration': (params) => configurationAnswer(params.items, [], settings),
  });
  await lsp.request('initialize', {
    processId: process.pid,
    rootUri: pathToFileURL(dir).href,
    capabilities: { workspace: { configuration: true }, textDocument: { hover: { contentFormat: ['markdown', 'plaintext'] }, completion: { completionItem: { snippetSupport: true } } } },
  });
  lsp.notify('initialized', {});
  lsp.notify('workspace/didChangeConfiguration', { settings: null });
});

after(async () => {
  await lsp?.close();
  await rm(dir, { recursive: true, force: true });
});

test('svc.yml gets the schema\'s errors: a value out of range and an unknown key', async () => {
  const uri = open('svc.yml', file);
  const { diagnostics } = await lsp.notification('textDocument/publishDiagnostics', (p) => p.uri === uri && p.diagnostics.length > 0);
  const lines = diagnostics.map((d: { range: { start: { line: number } } }) => d.range.start.line).sort();
  assert.deepEqual(lines, [4, 5], JSON.stringify(diagnostics));
});

test('a profile svc.ci.yml is checked too, another YAML file is not', async () => {
  const profile = open('svc.ci.yml', file);
  assert.equal((await lsp.notification('textDocument/publishDiagnostics', (p) => p.uri === profile && p.diagnostics.length > 0)).diagnostics.length, 2);
  const other = open('deploy.yml', file);
  assert.deepEqual((await lsp.notification('textDocument/publishDiagnostics', (p) => p.uri === other)).diagnostics, []);
});

test('hovering a key shows what it does, from the schema\'s description', async () => {
  const uri = open('svc.yml', file);
  const hover = await lsp.request('textDocument/hover', { textDocument: { uri }, position: { line: 4, character: 6 } });
  const text = JSON.stringify(hover?.contents);
  const description = JSON.stringify(svcSchema).match(/"replicas":\{[^}]*"description":"([^"]+)"/)?.[1];
  assert.ok(description, 'the schema describes replicas');
  assert.ok(text.includes(description!.slice(0, 30)), text);
});

test('completion inside a service offers its keys', async () => {
  const uri = open('svc.yml', 'schema: svc/v1\nservices:\n  web:\n    type: steps\n    \n');
  const completion = await lsp.request('textDocument/completion', { textDocument: { uri }, position: { line: 4, character: 4 } });
  const labels = (Array.isArray(completion) ? completion : completion.items).map((item: { label: string }) => item.label);
  for (const key of ['steps', 'replicas', 'ports', 'needs']) assert.ok(labels.includes(key), labels.join(', '));
});
