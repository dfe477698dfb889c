// Spec 7 (errors are problems) and 4.1 (every answer carries Svc-Version): checked on purpose-made bad requests,
// and at the end on every answer the suite received.
import { check, type Rule } from '../suite.ts';
import { expectProblem, problemFault } from '../shapes.ts';

export const badInputRules: Rule[] = [
  {
    section: '7',
    title: 'a malformed JSON body answers 400 with a problem',
    async run({ http }) {
      expectProblem(await http.send('POST', '/workspaces', { rawBody: '{"name": ', idempotent: true }), 400);
    },
  },
  {
    section: '7',
    title: 'invalid input answers 422 with errors naming each field by JSON Pointer with a message',
    async run({ http }) {
      const answer = await http.post('/workspaces', { team_id: 'not a number', name: 7 }, { idempotent: true });
      expectProblem(answer, 422);
      const errors = answer.body.errors;
      check(Array.isArray(errors) && errors.length > 0, 'the problem has no errors list');
      for (const error of errors) {
        check(typeof error?.pointer === 'string' && (error.pointer === '' || error.pointer.startsWith('/')), `error ${JSON.stringify(error)} has no JSON Pointer`);
        check(typeof error.message === 'string' && error.message !== '', `error ${JSON.stringify(error)} has no message`);
      }
      const pointers = errors.map((error: { pointer: string }) => error.pointer);
      check(pointers.some((p: string) => p === '/team_id' || p === '/name'), `the errors point at ${pointers.join(', ')}, not at /team_id or /name`);
    },
  },
];

/** Run last: they judge every answer the rules before them received. */
export const everyAnswerRules: Rule[] = [
  {
    section: '7',
    title: 'every error answer the suite received is an application/problem+json problem with type, title and status',
    async run({ http }) {
      const faults = http.exchanges.filter((e) => e.status >= 400).map(problemFault).filter((f): f is string => f !== undefined);
      check(faults.length === 0, `${faults.length} of them are not: ${faults.slice(0, 3).join('; ')}`);
    },
  },
  {
    section: '4.1',
    title: 'every answer the suite received carries Svc-Version',
    async run({ http }) {
      const without = http.exchanges.filter((e) => !e.headers.get('svc-version'));
      const shown = without.slice(0, 3).map((e) => `${e.method} /api/v1${e.path} (${e.status})`);
      check(without.length === 0, `${without.length} of ${http.exchanges.length} answers have none: ${shown.join(', ')}`);
    },
  },
];
