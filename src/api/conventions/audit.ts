// Every state-changing request is recorded: actor, action, target, team, time and outcome (HTTP status).
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../core/clock.ts';
import type { Queryable } from '../../store/database.ts';
import { insertAuditEntry } from '../../store/audit.ts';
import { API_PREFIX } from '../context.ts';
import { isStateChanging } from './authentication.ts';

export function registerAudit(app: FastifyInstance, pool: Queryable, clock: Clock, log: (m: string) => void): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((m) => isStateChanging(m)) && !route.config?.audit) {
      throw new Error(`route ${methods.join(',')} ${route.url} changes state but declares no audit action`);
    }
  });

  // Written before the answer leaves, so that a client that sees the answer also finds the entry.
  app.addHook('onSend', async (request, reply, payload) => {
    const action = request.routeOptions.config.audit;
    if (!action || !isStateChanging(request.method)) return payload;
    const path = request.url.split('?')[0];
    try {
      await insertAuditEntry(pool, {
        at: clock.now(),
        actor_id: request.principal?.user.id ?? null,
        action,
        method: request.method,
        target: request.auditTarget ?? (path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : path),
        team_id: request.auditTeamId ?? null,
        outcome: reply.statusCode,
        address: request.ip,
      });
    } catch (error) {
      log(`audit entry lost for ${action} ${path}: ${(error as Error).message}`);
    }
    return payload;
  });
}
