// The pure parts of a managed NATS instance: its configuration text, the quoting of the password, the plan's
// limits and the reason read from the server's log.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { natsConfig, natsFailureReason, natsLimits, natsMajor, natsSpecErrors, quoted, type NatsInstanceSpec } from './nats-rules.ts';

const spec: NatsInstanceSpec = {
  id: 7, user: 'app', password: 'a "b" \\c $d', uid: 10007, address: '10.1.0.2', port: 4222, monitoringPort: 8222,
  jetstream: true, maxPayload: 1048576, ...natsLimits({ storage: 1024, memory: 256, connections: 100 }),
};

test('the configuration listens on the instance address, names its one user and the plan\'s JetStream limits', () => {
  assert.equal(
    natsConfig(spec),
    [
      'server_name: "ms-7"',
      'listen: "10.1.0.2:4222"',
      'http: "10.1.0.2:8222"',
      'max_connections: 100',
      'max_payload: 1048576',
      'authorization {\n  user: "app"\n  password: "a \\"b\\" \\\\c $d"\n}',
      'jetstream {\n  store_dir: "/data/app/store"\n  max_file_store: 1073741824\n  max_memory_store: 134217728\n}',
      '',
    ].join('\n'),
  );
  assert.doesNotMatch(natsConfig({ ...spec, jetstream: false }), /jetstream/);
  assert.equal(quoted('x\\"'), '"x\\\\\\""');
});

test('a spec with a control character in the password, a bad user or equal ports is refused with each reason', () => {
  assert.deepEqual(natsSpecErrors(spec), []);
  assert.deepEqual(natsSpecErrors({ ...spec, password: 'line\nbreak!', user: '1x', monitoringPort: 4222 }), [
    'the user name "1x" is not a name of letters, digits, _ and - (at most 63)',
    'the password must have at least 8 characters and no control characters',
    'the client and monitoring ports must differ',
  ]);
});

test('the failure reason is nats-server\'s fatal line without its prefix; the major comes from --version', () => {
  const log = '[12] 2026/01/01 00:00:00.000 [INF] Starting nats-server\n[12] 2026/01/01 00:00:00.001 [FTL] Error listening on port: 10.1.0.2:4222, "listen tcp 10.1.0.2:4222: bind: address already in use"\n';
  assert.equal(natsFailureReason(log), 'Error listening on port: 10.1.0.2:4222, "listen tcp 10.1.0.2:4222: bind: address already in use"');
  assert.equal(natsFailureReason(''), undefined);
  assert.equal(natsMajor('nats-server: v2.9.10\n'), '2');
});
