// Replicas' network namespaces made ahead of their start (ReplicaDriver.prepareReplicas): the address each was
// linked at, by workspace, service and index, until the replica's start takes it or the Sync releases it. While
// prepared, the address counts as taken for other replicas (two links with one address and one MAC on the switch
// would confuse it). Kept in memory: after a restart of the server a start finds the namespace linked at another
// address (or none) and makes it afresh, as it always did.
import type { ReplicaRef } from '../driver.ts';

const keyOf = (replica: ReplicaRef) => `${replica.service}/${replica.index}`;

export class PreparedNamespaces {
  private readonly byWorkspace = new Map<number, Map<string, string>>();

  put(workspaceId: number, replica: ReplicaRef, address: string): void {
    let prepared = this.byWorkspace.get(workspaceId);
    if (!prepared) this.byWorkspace.set(workspaceId, (prepared = new Map()));
    prepared.set(keyOf(replica), address);
  }

  /** The address the replica's namespace was prepared at, forgotten as it is taken; undefined when none was. */
  take(workspaceId: number, replica: ReplicaRef): string | undefined {
    const prepared = this.byWorkspace.get(workspaceId);
    const address = prepared?.get(keyOf(replica));
    if (address === undefined) return undefined;
    prepared!.delete(keyOf(replica));
    if (prepared!.size === 0) this.byWorkspace.delete(workspaceId);
    return address;
  }

  /** The addresses held by the workspace's prepared namespaces of other replicas than `replica`. */
  heldByOthers(workspaceId: number, replica: ReplicaRef): string[] {
    const key = keyOf(replica);
    return [...(this.byWorkspace.get(workspaceId) ?? [])].filter(([other]) => other !== key).map(([, address]) => address);
  }
}
