// Providers whose server process is described (src/runtime/managed-process.ts) for a driver that runs descriptions
// (the Kubernetes driver), by provider name. A described engine writes the process from the request (pure), then
// talks to the running server over the network as a client would (its database, its settings), never to its files.
import type { ManagedProcess } from '../runtime/managed-process.ts';
import type { DumpInfo, InstanceDetails, InstanceRequest, ManagedHost } from './engine.ts';
import { natsDescribed } from './nats-process.ts';
import { postgresDescribed } from './postgres-process.ts';
import { redisDescribed } from './redis-process.ts';

export interface DescribedEngine {
  /** The server process of the instance `request` asks for (its address is the driver's to give). */
  describe(request: Omit<InstanceRequest, 'netns' | 'address'>): ManagedProcess;
  /**
   * Once the process runs at `request.address`: waits until it serves, then brings what it keeps (its database,
   * extensions, settings) to the request's; answers the settings that wait for a restart. Throws
   * ManagedInstanceFailure. `changing` is called before a change reaches the instance.
   */
  configure?(host: ManagedHost, request: InstanceRequest, hooks: { changing?: () => Promise<void> }): Promise<string[]>;
  details(request: Omit<InstanceRequest, 'netns' | 'address'>): InstanceDetails;
  dump?(host: ManagedHost, request: InstanceRequest, file: string): Promise<DumpInfo>;
  restore?(host: ManagedHost, request: InstanceRequest, file: string): Promise<void>;
  missingDumpTools?(host: ManagedHost): Promise<string | undefined>;
}

export const describedEngines: Readonly<Record<string, DescribedEngine>> = {
  postgres: postgresDescribed,
  redis: redisDescribed,
  nats: natsDescribed,
};

export function describedEngineOf(provider: string): DescribedEngine | undefined {
  return Object.hasOwn(describedEngines, provider) ? describedEngines[provider] : undefined;
}
