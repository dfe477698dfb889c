// Every answer of the console and API counted by the route that answered it: its pattern, never the address asked
// for (no ids, no names, no unbounded label values). Requests to workspace hosts go to the router, not here.
import type { FastifyInstance } from 'fastify';
import type { ServerMetrics } from './server-metrics.ts';

export function registerRequestMetrics(app: FastifyInstance, metrics: ServerMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requestAnswered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
