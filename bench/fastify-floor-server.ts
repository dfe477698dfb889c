// A second reference for bench/api: Fastify with nothing of svc's (no hooks, no schemas, no other routes), answering
// the same JSON as bare-server.ts. svc against it is what svc's own conventions cost; it against bare Node is what
// Fastify itself costs on this machine, which svc cannot go below while the API is a Fastify app (a fixed decision).
import Fastify from 'fastify';
import { meAnswer as me, releaseHeader, versionAnswer as version } from './reference-answers.ts';

const app = Fastify({ logger: false, genReqId: () => '' });
for (const [url, body] of [['/api/v1/version', version], ['/api/v1/me', me]] as const) {
  app.get(url, (_request, reply) => void reply.headers(releaseHeader).type('application/json; charset=utf-8').send(body));
}
const address = await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(`listening on ${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
