import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentStatus } from '../../agent/protocol.ts';
import { RuntimeFailure } from '../driver.ts';
import { editorStateOf, podFailureReason } from './editor-status.ts';

const editor = { host: '10.213.0.6', port: 8443 };
const agent = (state: AgentStatus['editor']['state'], reason?: string): AgentStatus => ({
  agentVersion: '1',
  pid: 2,
  editor: { state, reason, restarts: 0, port: 8443 },
});

test('no pod is absent; a pod whose agent does not answer yet is Starting', () => {
  assert.deepEqual(editorStateOf({ pod: 'absent' }), { state: 'absent' });
  assert.deepEqual(editorStateOf({ pod: 'running', agent: undefined, editor }), { state: 'starting', statusText: 'Starting' });
});

test('the agent\'s editor state becomes Starting IDE, ready with the address, or an IDE failure with its reason', () => {
  assert.deepEqual(editorStateOf({ pod: 'running', agent: agent('starting'), editor }), { state: 'starting', statusText: 'Starting IDE' });
  assert.deepEqual(editorStateOf({ pod: 'running', agent: agent('ready'), editor }), { state: 'ready', address: editor });
  const failed = editorStateOf({ pod: 'running', agent: agent('failed', 'port 8443 is taken'), editor });
  assert.equal(failed.state, 'failed');
  if (failed.state !== 'failed') return;
  assert.ok(failed.failure instanceof RuntimeFailure);
  assert.deepEqual([failed.failure.stage, failed.failure.reason], ['ide', 'port 8443 is taken']);
  const unexplained = editorStateOf({ pod: 'running', agent: agent('failed'), editor });
  assert.equal(unexplained.state === 'failed' && unexplained.failure.reason, 'the editor keeps exiting');
});

test('a pod\'s failure reason is the error its log names, not Node\'s stack or version line', () => {
  const nodeCrash = [
    'file:///opt/svc/src/agent/main.ts:1',
    "throw new Error('the agent cannot read its settings');",
    '      ^',
    '',
    'Error: the agent cannot read its settings',
    '    at file:///opt/svc/src/agent/main.ts:1:7',
    '    at ModuleJob.run (node:internal/modules/esm/module_job:195:25)',
    '',
    'Node.js v20.20.2',
  ].join('\n');
  assert.equal(podFailureReason(nodeCrash), 'the agent cannot read its settings');
  assert.equal(podFailureReason("Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/opt/svc/x.ts'\n{\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.20.2\n"), "Cannot find module '/opt/svc/x.ts'");
  assert.equal(podFailureReason('bwrap: Can\'t find source path /srv/v/42: Permission denied\n'), "Can't find source path /srv/v/42: Permission denied");
  assert.equal(podFailureReason('agent: agent 1 listening on 0.0.0.0:7070\nTypeError: x is not a function\n'), 'TypeError: x is not a function');
  assert.equal(podFailureReason('agent: shutting down\n'), 'shutting down');
  assert.equal(podFailureReason('\n\n'), undefined);
});
