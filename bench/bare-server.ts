// The reference: a bare Node http server answering the same JSON as the svc routes under test.
import http from 'node:http';
import { meAnswer as me, releaseHeader, versionAnswer as version } from './reference-answers.ts';

// The same headers object for every answer (Node reads it, never changes it), as a literal per answer would cost alike.
const headers = { 'content-type': 'application/json; charset=utf-8', ...releaseHeader };

const server = http.createServer((request, response) => {
  const body = request.url === '/api/v1/me' ? me : version;
  response.writeHead(200, headers);
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
