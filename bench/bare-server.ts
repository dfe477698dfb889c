// The reference: a bare Node http server answering the same JSON as the svc routes under test.
import http from 'node:http';
import { meAnswer as me, versionAnswer as version } from './reference-answers.ts';

const server = http.createServer((request, response) => {
  const body = request.url === '/api/v1/me' ? me : version;
  response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'svc-version': '1.5.0' });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
