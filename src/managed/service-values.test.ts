import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkLandscapeText } from '../workspaces/landscape-check.ts';

const context = { workspace: { id: 1, devDomain: 'w1.localhost' }, team: { id: 1 }, env: {}, secrets: { PW: 'p@ss word', MQ: 'broker/pw' }, services: {} };

test("services.<managed>.host, .port, .dsn, .secret and .details.<field> fill another service's env at Plan as Sync gives them", () => {
  const text = `schema: svc/v1
services:
  db:
    type: managed
    provider: postgres
    config: {database: shop, user: owner}
    secrets: {password: "\${{ secrets.PW }}"}
  cache:
    type: managed
    provider: redis
    secrets: {password: "\${{ secrets.PW }}"}
  mq:
    type: managed
    provider: nats
    secrets: {password: "\${{ secrets.MQ }}"}
  web:
    type: steps
    steps: [{run: node web.js}]
    env:
      DB: "\${{ services.db.host }}:\${{ services.db.port }}"
      DB_DSN: "\${{ services.db.dsn }}"
      DB_SECRET: "\${{ services.db.secret }}"
      DB_NAMES: "\${{ services.db.details.database }} \${{ services.db.details.user }} \${{ services.db.details.version }}"
      CACHE: "\${{ services.cache.dsn }}"
      MQ: "\${{ services.mq.dsn }} \${{ services.mq.details.monitoringPort }}"
`;
  const checked = checkLandscapeText({ text, plan: { previous: null, before: {}, context, managedVersions: { db: '15' } } });
  assert.ok(checked.state === 'checked' && checked.planned && !checked.planned.problem, JSON.stringify(checked));
  assert.deepEqual(checked.planned.env.web, {
    DB: 'db:5432',
    DB_DSN: 'postgresql://owner:p%40ss%20word@db:5432/shop',
    DB_SECRET: 'p@ss word',
    DB_NAMES: 'shop owner 15', // the version the instance was created with, not the catalog's default
    CACHE: 'redis://:p%40ss%20word@cache:6379/0',
    MQ: 'nats://app:broker%2Fpw@mq:4222 8222',
  });
});

test('a detail the provider does not publish is refused at Plan with its place in the file', () => {
  const text = 'schema: svc/v1\nservices:\n  db:\n    type: managed\n    provider: redis\n  web:\n    type: steps\n    steps: [{run: node web.js}]\n    env: {X: "${{ services.db.details.database }}"}\n';
  const checked = checkLandscapeText({ text, plan: { previous: null, before: {}, context } });
  assert.ok(checked.state === 'checked' && checked.planned?.problem, JSON.stringify(checked));
  const { problem } = checked.planned;
  assert.deepEqual([problem.status, problem.name], [422, 'invalid-landscape']);
  assert.deepEqual(problem.errors?.map((e) => [e.pointer, e.line]), [['/services/web/env/X', 9]]);
});
