// Every state-changing request is recorded: actor, action, target, team, time and outcome (HTTP status).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addRouteHook, routeMethods } from './route-hooks.ts';
import type { Clock } from '../../core/clock.ts';
import type { Queryable } from '../../store/database.ts';
import { insertAuditEntry } from '../../store/audit.ts';
import { API_PREFIX } from '../context.ts';
import { isStateChanging } from './authentication.ts';

export function registerAudit(app: FastifyInstance, pool: Queryable, clock: Clock, log: (m: string) => void): void {
  // Written before the answer leaves, so that a client that sees the answer also finds the entry.
  const record = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const action = request.routeOptions.config.audit!;
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
  };

  app.addHook('onRoute', (route) => {
    const methods = routeMethods(route);
    if (!methods.some((m) => isStateChanging(m))) return;
    if (!route.config?.audit) throw new Error(`route ${methods.join(',')} ${route.url} changes state but declares no audit action`);
    addRouteHook(route, 'onSend', record);
  });
}
