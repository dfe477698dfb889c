// GET /metrics on the API listener: the Prometheus metrics for platform administrators (src/metrics). A scraper
// without credentials reads the same text on --metrics-listen.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { problem } from '../../core/problems.ts';
import { METRICS_CONTENT_TYPE } from '../../metrics/server-metrics.ts';
import type { ApiDeps } from '../context.ts';

export function registerMetricsRoute(app: FastifyInstance, deps: ApiDeps): void {
  app.get(
    '/metrics',
    {
      config: { access: 'admin' },
      schema: {
        summary: "The server's metrics in the Prometheus text format (platform.admin); docs/operators.md, \"Metrics\"",
        tags: ['meta'],
        produces: ['text/plain'],
        response: {
          200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: Type.String() } } },
        },
      },
    },
    async (_request, reply) => {
      if (!deps.metrics) throw problem('unavailable', 503, 'This server keeps no metrics.');
      const text = await deps.metrics.text();
      return reply.type(METRICS_CONTENT_TYPE).header('cache-control', 'no-store').send(text);
    },
  );
}
