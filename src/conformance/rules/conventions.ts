// Spec 4.1 (shared conventions), 4.5 (operations without credentials), 2.8 (the served schema) and 9 (versioning).
import { check, described, type Rule } from '../suite.ts';
import { expectProblem } from '../shapes.ts';

export const withoutCredentialsRules: Rule[] = [
  {
    section: '9',
    title: 'GET /version answers without credentials with the version the Svc-Version header carries',
    async run({ http }) {
      const answer = await http.get('/version', { anonymous: true });
      check(answer.status === 200, `${described(answer)}, not 200`);
      const header = answer.headers.get('svc-version');
      check(header, 'the answer has no Svc-Version header');
      check(answer.text.includes(header), `the body ${answer.text.slice(0, 100)} does not carry the version ${header} of Svc-Version`);
    },
  },
  {
    section: '4.5',
    title: 'GET /openapi.yaml answers without credentials with an OpenAPI document that has info.version',
    async run(context) {
      const document = await context.openapiDocument();
      check(typeof document?.openapi === 'string', 'the document has no "openapi" version field');
      check(typeof document?.info?.version === 'string' && document.info.version !== '', 'the document has no info.version');
    },
  },
  {
    section: '4.1',
    title: 'GET /openapi.yaml with If-None-Match of its current ETag answers 304 without a body',
    async run({ http }) {
      const first = await http.get('/openapi.yaml', { anonymous: true });
      const etag = first.headers.get('etag');
      check(etag, 'the OpenAPI document has no ETag to send back in If-None-Match');
      const again = await http.get('/openapi.yaml', { anonymous: true, headers: { 'if-none-match': etag } });
      check(again.status === 304, `${described(again)} with If-None-Match: ${etag}, not 304`);
      check(again.text === '', 'the 304 answer has a body');
    },
  },
  {
    section: '2.8',
    title: 'GET /schemas/svc.json answers without credentials with the JSON Schema urn:svc:schema:svc-v1',
    async run({ http }) {
      const answer = await http.get('/schemas/svc.json', { anonymous: true });
      check(answer.status === 200, `${described(answer)}, not 200`);
      check(answer.body && typeof answer.body === 'object', 'the answer is not JSON');
      check(answer.body.$id === 'urn:svc:schema:svc-v1', `$id is ${JSON.stringify(answer.body.$id)}, not urn:svc:schema:svc-v1`);
    },
  },
];

export const paginationRules: Rule[] = [
  {
    section: '4.1',
    title: 'lists answer items and next_cursor, and the next page continues where the first ended',
    async run({ http }) {
      const first = await http.get('/workspaces?limit=1');
      check(first.status === 200, `${described(first)}, not 200`);
      check(Array.isArray(first.body?.items), 'the list has no items array');
      check(first.body.items.length <= 1, `limit=1 gave ${first.body.items.length} items`);
      const cursor = first.body.next_cursor;
      if (cursor === undefined || cursor === null) return; // one page: absent next_cursor means no more pages
      check(typeof cursor === 'string', 'next_cursor is not a string');
      const next = await http.get(`/workspaces?limit=1&cursor=${encodeURIComponent(cursor)}`);
      check(next.status === 200, `${described(next)} with the cursor it gave, not 200`);
      const seen = new Set(first.body.items.map((item: { id: unknown }) => item.id));
      check(!next.body.items.some((item: { id: unknown }) => seen.has(item.id)), 'the second page repeats an item of the first');
    },
  },
  {
    section: '4.1',
    title: 'a page size outside 1 to 200 is refused with a problem (400 or 422)',
    async run({ http }) {
      for (const limit of [0, 201]) expectProblem(await http.get(`/workspaces?limit=${limit}`), [400, 422]);
    },
  },
];
