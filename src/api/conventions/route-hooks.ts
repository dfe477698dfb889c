// Conventions attach their hooks only to the routes that need them (a GET never pays for idempotency or
// audit), in the order the conventions are registered.
import type { RouteOptions } from 'fastify';

type HookName = 'onRequest' | 'preValidation' | 'preHandler' | 'onSend' | 'onResponse';

export function addRouteHook(route: RouteOptions, name: HookName, hook: unknown): void {
  const existing = route[name] as unknown;
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing];
  (route as unknown as Record<HookName, unknown[]>)[name] = [...list, hook];
}

export function routeMethods(route: RouteOptions): string[] {
  return Array.isArray(route.method) ? route.method : [route.method];
}
