// The driver's picture of the cluster: the objects its watches delivered (pods, jobs), by namespace and name, and
// waiters that resolve when a change makes their condition true. Fed by informers (cluster.ts), read by the driver
// instead of polling the API server. Pure: no I/O of its own.

export interface StoredObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
}

export type WatchEvent = 'add' | 'update' | 'delete';

export const objectKey = (namespace: string, name: string) => `${namespace}/${name}`;

interface Waiter<T> {
  key: string;
  check: (object: T | undefined) => boolean;
  resolve: (object: T | undefined) => void;
  reject: (error: Error) => void;
}

export class ObjectStore<T extends StoredObject> {
  private readonly objects = new Map<string, T>();
  private readonly waiters = new Set<Waiter<T>>();
  private readonly listeners = new Set<(event: WatchEvent, object: T) => void>();
  private closedWith: Error | undefined;

  /** One watch event. An update older than what is stored (a smaller resourceVersion of the same object) is ignored. */
  apply(event: WatchEvent, object: T): void {
    const key = keyOf(object);
    if (!key) return;
    if (event === 'delete') {
      const stored = this.objects.get(key);
      // a delete of an older incarnation (another uid) must not remove the new object of the same name
      if (stored && object.metadata?.uid && stored.metadata?.uid && stored.metadata.uid !== object.metadata.uid) return;
      this.objects.delete(key);
    } else {
      const stored = this.objects.get(key);
      if (stored && sameIncarnation(stored, object) && isOlder(object, stored)) return;
      this.objects.set(key, object);
    }
    for (const listener of this.listeners) listener(event, object);
    this.settle(key);
  }

  /** Replaces everything with a fresh list (an informer's relist after its watch broke). */
  replaceAll(objects: readonly T[]): void {
    const before = new Set(this.objects.keys());
    this.objects.clear();
    for (const object of objects) {
      const key = keyOf(object);
      if (key) this.objects.set(key, object);
    }
    for (const key of new Set([...before, ...this.objects.keys()])) this.settle(key);
  }

  get(namespace: string, name: string): T | undefined {
    return this.objects.get(objectKey(namespace, name));
  }

  list(filter: (object: T) => boolean = () => true): T[] {
    return [...this.objects.values()].filter(filter);
  }

  onChange(listener: (event: WatchEvent, object: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves with the object (or undefined once it is gone) as soon as `check` holds for it: at once when it holds
   * now, else at the watch event that makes it hold. `signal` abandons the wait (its reason rejects it).
   */
  waitFor(namespace: string, name: string, check: (object: T | undefined) => boolean, signal?: AbortSignal): Promise<T | undefined> {
    const key = objectKey(namespace, name);
    if (this.closedWith) return Promise.reject(this.closedWith);
    const now = this.objects.get(key);
    if (check(now)) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter: Waiter<T> = { key, check, resolve, reject };
      this.waiters.add(waiter);
      signal?.addEventListener('abort', () => {
        if (this.waiters.delete(waiter)) reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      }, { once: true });
    });
  }

  /**
   * `waitFor` on an object the caller just created: its absence counts only once the watch has shown it (the
   * create's answer comes before the watch event), so a wait never ends on "not there yet".
   */
  waitForCreated(namespace: string, name: string, check: (object: T | undefined) => boolean, signal?: AbortSignal): Promise<T | undefined> {
    let seen = false;
    return this.waitFor(namespace, name, (object) => {
      if (object) seen = true;
      return seen && check(object);
    }, signal);
  }

  /** Resolves at the next watch event of the object (or when it goes); `signal` ends the wait. */
  nextChange(namespace: string, name: string, signal?: AbortSignal): Promise<T | undefined> {
    const now = this.get(namespace, name);
    return this.waitFor(namespace, name, (object) => object !== now, signal);
  }

  /** Rejects every wait (the driver closes). */
  close(error: Error): void {
    this.closedWith = error;
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
    this.listeners.clear();
  }

  private settle(key: string): void {
    const object = this.objects.get(key);
    for (const waiter of this.waiters) {
      if (waiter.key !== key) continue;
      let holds: boolean;
      try {
        holds = waiter.check(object);
      } catch (error) {
        this.waiters.delete(waiter);
        waiter.reject(error as Error);
        continue;
      }
      if (holds) {
        this.waiters.delete(waiter);
        waiter.resolve(object);
      }
    }
  }
}

function keyOf(object: StoredObject): string | undefined {
  const { name, namespace } = object.metadata ?? {};
  return name && namespace ? objectKey(namespace, name) : undefined;
}

const sameIncarnation = (a: StoredObject, b: StoredObject) => !a.metadata?.uid || !b.metadata?.uid || a.metadata.uid === b.metadata.uid;

/** resourceVersion is opaque in general, but etcd-backed servers give integers; only compare those. */
function isOlder(candidate: StoredObject, stored: StoredObject): boolean {
  const a = candidate.metadata?.resourceVersion;
  const b = stored.metadata?.resourceVersion;
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}
