// The reference: a bare Node http server answering the same JSON as the svc routes under test.
import http from 'node:http';

const version = JSON.stringify({ version: '1.5.0', api_version: '1.5.0' });
const me = JSON.stringify({
  id: 1,
  email: 'admin@localhost',
  name: 'Administrator',
  permissions: ['platform.admin'],
  has_password: false,
  created_at: new Date().toISOString(),
  authenticated_by: 'key',
});

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
