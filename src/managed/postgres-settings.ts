// The server settings of a managed PostgreSQL instance from its plan's resources and the file's `config`, as
// PostgreSQL writes them ('128MB'). Pure: postgres-engine.ts hands them to the instance (ALTER SYSTEM), which
// reloads what applies live and says what waits for a restart.
import type { ConfigValue } from '../landscape/index.ts';
import type { ManagedPlanDefinition } from './providers.ts';

/** The share of the plan's memory given to shared_buffers (PostgreSQL's usual advice: a quarter). */
export const SHARED_BUFFERS_SHARE = 1 / 4;
/** The share the planner may assume the operating system caches for it (effective_cache_size). */
export const EFFECTIVE_CACHE_SHARE = 3 / 4;

/**
 * `max_connections` from the plan's `connections`; `shared_buffers` (a quarter) and `effective_cache_size` (three
 * quarters) from its `memory`; `work_mem` (MiB), `statement_timeout` (ms) and `timezone` from `config`. A key the
 * file leaves out is not set, so PostgreSQL's own default (or initdb's, UTC for the time zone) holds.
 */
export function postgresSettings(plan: ManagedPlanDefinition | undefined, config: Readonly<Record<string, ConfigValue>>): Record<string, string> {
  const settings: Record<string, string> = {};
  const connections = plan?.resources.connections?.value;
  if (connections !== undefined) settings.max_connections = String(connections);
  const memory = plan?.resources.memory?.value;
  if (memory !== undefined) {
    settings.shared_buffers = `${Math.max(16, Math.floor(memory * SHARED_BUFFERS_SHARE))}MB`;
    settings.effective_cache_size = `${Math.max(8, Math.floor(memory * EFFECTIVE_CACHE_SHARE))}MB`;
  }
  if (typeof config.work_mem === 'number') settings.work_mem = `${config.work_mem}MB`;
  if (typeof config.statement_timeout === 'number') settings.statement_timeout = `${config.statement_timeout}ms`;
  if (typeof config.timezone === 'string') settings.timezone = config.timezone;
  return settings;
}
