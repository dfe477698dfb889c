// The providers this installation runs, by name (engine.ts). A provider of the catalog without an engine here is
// refused at Sync with 501 (landscape-service.ts), never deployed as a database that silently does not exist.
import type { ProviderEngine } from './engine.ts';
import { natsEngine } from './nats-engine.ts';
import { postgresEngine } from './postgres-engine.ts';
import { redisEngine } from './redis-engine.ts';

export const providerEngines: Readonly<Record<string, ProviderEngine>> = {
  postgres: postgresEngine,
  redis: redisEngine,
  nats: natsEngine,
};

export function engineOf(provider: string): ProviderEngine | undefined {
  return Object.hasOwn(providerEngines, provider) ? providerEngines[provider] : undefined;
}
