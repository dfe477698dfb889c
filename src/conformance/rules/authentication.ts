// Spec 5 (authentication) and 7 (401/403/404): what any installation answers to missing, wrong and misplaced keys.
import { check, described, type Rule } from '../suite.ts';
import { expectProblem } from '../shapes.ts';

/** Well-formed (`svc_<id>_<secret>`) but no installation issued it. */
const unknownKey = 'svc_00000000-0000-4000-8000-000000000000_conformance-no-such-secret';

export const authenticationRules: Rule[] = [
  {
    section: '5',
    title: 'a request without credentials answers 401 with a problem',
    async run({ http }) {
      expectProblem(await http.get('/me', { anonymous: true }), 401);
    },
  },
  {
    section: '5',
    title: 'an invalid key answers 401 with a problem',
    async run({ http }) {
      expectProblem(await http.get('/me', { token: unknownKey }), 401);
      expectProblem(await http.get('/me', { token: 'not-a-key' }), 401);
    },
  },
  {
    section: '5',
    title: 'the key is accepted as Authorization: Bearer and as Svc-Authorization: Bearer',
    async run({ http }) {
      const plain = await http.get('/me');
      check(plain.status === 200, `${described(plain)} with Authorization, not 200`);
      const svc = await http.get('/me', { svcAuthorization: true });
      check(svc.status === 200, `${described(svc)} with Svc-Authorization, not 200`);
    },
  },
  {
    section: '4.2',
    title: 'creating an API key with an API key answers 403 (only a browser session may)',
    async run(context) {
      const answer = await context.http.post('/me/api-keys', { name: 'svc conformance (must be refused)' }, { idempotent: true });
      if (answer.status === 201 && typeof answer.body?.id === 'string' && (await context.documents('DELETE', '/me/api-keys/{key}'))) {
        context.onCleanup(`API key ${answer.body.id}`, async () => void (await context.http.delete(`/me/api-keys/${answer.body.id}`)));
      }
      expectProblem(answer, 403);
    },
  },
];

export const notFoundRules: Rule[] = [
  {
    section: '7',
    title: 'an object that does not exist answers 404 with a problem',
    async run({ http }) {
      expectProblem(await http.get('/operations/00000000-0000-4000-8000-000000000000'), 404);
      expectProblem(await http.get(`/workspaces/${Number.MAX_SAFE_INTEGER}`), 404);
    },
  },
];
