// The thin adapter between the Kubernetes driver and the API server, through @kubernetes/client-node: the
// configuration (KUBECONFIG, ~/.kube/config, or the pod's service account in a cluster), creating and deleting the
// objects the pure builders write, reading a pod's output, and the watches (informers) that feed the driver's
// object store. Nothing here decides anything.
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  ApiException, BatchV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi, makeInformer,
  type Informer, type KubernetesObject, type V1Job, type V1Pod,
} from '@kubernetes/client-node';
import type { Manifest } from './manifests.ts';
import { DEFAULT_INSTALLATION, labelKeys } from './names.ts';
import { ObjectStore, type WatchEvent } from './object-store.ts';

/** Every object svc writes carries this label; the watches see only those. */
export const MANAGED_SELECTOR = `${labelKeys.managedBy}=svc`;
/** What the watches of one installation see: its own objects, never another installation's on the same cluster. */
export const installationSelector = (installation = DEFAULT_INSTALLATION) => `${MANAGED_SELECTOR},${labelKeys.installation}=${installation}`;

/**
 * The cluster configuration: `KUBECONFIG` (or ~/.kube/config), else the service account of the pod svc runs in.
 * Without any of them it refuses (client-node alone would fall back to http://localhost:8080).
 */
export function loadKubeConfig(env: NodeJS.ProcessEnv = process.env): KubeConfig {
  const config = new KubeConfig();
  const home = env.HOME ? path.join(env.HOME, '.kube', 'config') : undefined;
  const files = (env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (files.length === 1) config.loadFromFile(files[0]);
  else if (files.length > 1 || (home && existsSync(home))) config.loadFromDefault(); // merges the files of process.env.KUBECONFIG
  else if (env.KUBERNETES_SERVICE_HOST) config.loadFromCluster();
  else throw new Error('no Kubernetes cluster is configured: set KUBECONFIG, or run svc in a pod of the cluster');
  if (!config.getCurrentCluster()) throw new Error('the Kubernetes configuration names no current cluster');
  return config;
}

const statusOf = (error: unknown) => (error instanceof ApiException ? (error.code as number) : undefined);

/** What an API error says, for reasons shown to people (`Forbidden: pods is forbidden: ...`). */
export function apiErrorText(error: unknown): string {
  if (error instanceof ApiException) {
    const body = typeof error.body === 'string' ? safeJson(error.body) : error.body;
    const message = (body as { message?: string } | undefined)?.message;
    return `${error.code}${message ? `: ${message}` : ''}`;
  }
  return (error as Error).message;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text };
  }
}

export class Cluster {
  readonly pods = new ObjectStore<V1Pod>();
  readonly jobs = new ObjectStore<V1Job>();
  private readonly objects: KubernetesObjectApi;
  private readonly core: CoreV1Api;
  private readonly batch: BatchV1Api;
  private readonly informers: Array<Informer<KubernetesObject>> = [];
  private closed = false;

  constructor(private readonly config: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(config);
    this.core = config.makeApiClient(CoreV1Api);
    this.batch = config.makeApiClient(BatchV1Api);
  }

  /**
   * Starts the watches on svc's pods and jobs in every namespace. Resolves after their first list: the store then
   * holds everything that exists (what a restarted server finds again). A broken watch is listed and watched anew.
   */
  async watch(log: (message: string) => void, installation?: string): Promise<void> {
    const selector = installationSelector(installation);
    // one plain request first: an API server that cannot be reached (or refuses svc) stops the start with the reason,
    // where the informers alone would start and retry in silence
    try {
      await this.core.listPodForAllNamespaces({ labelSelector: selector, limit: 1 });
    } catch (error) {
      throw new Error(`the Kubernetes API server at ${this.config.getCurrentCluster()?.server} did not answer svc: ${apiErrorText(error)}`);
    }
    const pods = makeInformer<V1Pod>(this.config, '/api/v1/pods', () => this.core.listPodForAllNamespaces({ labelSelector: selector }), selector);
    const jobs = makeInformer<V1Job>(this.config, '/apis/batch/v1/jobs', () => this.batch.listJobForAllNamespaces({ labelSelector: selector }), selector);
    this.feed(pods, this.pods, 'pods', log);
    this.feed(jobs, this.jobs, 'jobs', log);
    await Promise.all([pods.start(), jobs.start()]);
  }

  private feed<T extends KubernetesObject>(informer: Informer<T> & { list(): readonly T[] }, store: ObjectStore<T>, what: string, log: (message: string) => void): void {
    const events: Array<[ 'add' | 'update' | 'delete', WatchEvent]> = [['add', 'add'], ['update', 'update'], ['delete', 'delete']];
    for (const [verb, event] of events) informer.on(verb, (object) => store.apply(event, object));
    informer.on('connect', () => store.replaceAll(informer.list()));
    informer.on('error', (error) => {
      log(`kubernetes: the watch on ${what} broke (${apiErrorText(error)}); watching again`);
      // the informer stops on an error: list and watch again (its list replaces the store)
      if (!this.closed) setTimeout(() => void (this.closed ? undefined : informer.start().catch(() => undefined)), 1000).unref();
    });
    this.informers.push(informer as unknown as Informer<KubernetesObject>);
  }

  /** Creates the object; one that exists already is left as it is (names are svc's, contents are the builders'). */
  async ensure(manifest: Manifest): Promise<void> {
    try {
      await this.objects.create(forClient(manifest));
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }

  /** Creates the object, or replaces the one of that name (Secrets whose contents change with each start). */
  async put(manifest: Manifest): Promise<void> {
    try {
      await this.objects.create(forClient(manifest));
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      const current = await this.objects.read(manifest as KubernetesObject & { metadata: { name: string; namespace: string } });
      await this.objects.replace(forClient({ ...manifest, metadata: { ...manifest.metadata, resourceVersion: current.metadata?.resourceVersion } } as Manifest));
    }
  }

  /**
   * Changes an object that exists (`change` edits what was read; it is written back only if that version is still
   * current, else read and changed again); answers false when there is none.
   */
  async update<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string, name: string, change: (object: T) => void): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      const current = await this.read<T>(apiVersion, kind, namespace, name);
      if (!current) return false;
      change(current);
      try {
        await this.objects.replace(current);
        return true;
      } catch (error) {
        if (statusOf(error) !== 409 || attempt >= 4) throw error;
      }
    }
  }

  /** Deletes the object (its dependents in the background; a pod gets its grace period); one that is gone already is fine. */
  async remove(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<void> {
    try {
      await this.objects.delete({ apiVersion, kind, metadata: { name, namespace } }, undefined, undefined, undefined, undefined, 'Background');
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
    }
  }

  /** The object, or undefined when there is none. */
  async read<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<T | undefined> {
    try {
      return (await this.objects.read({ apiVersion, kind, metadata: { name, namespace } } as never)) as T;
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  /** The objects of a kind in `namespace` with the labels of `labelSelector` (none in a namespace that does not exist). */
  async list<T>(apiVersion: string, kind: string, namespace: string, labelSelector: string): Promise<T[]> {
    const result = await this.objects.list(apiVersion, kind, namespace, undefined, undefined, undefined, undefined, labelSelector);
    return result.items as T[];
  }

  /** A container's output (the last `tailLines` lines, or all); '' when the pod has none yet. */
  async podLog(namespace: string, name: string, container: string, options: { tailLines?: number; previous?: boolean } = {}): Promise<string> {
    try {
      return await this.core.readNamespacedPodLog({ namespace, name, container, ...options });
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 400) return '';
      throw error;
    }
  }

  /** A Secret's value under `key`, decoded. */
  async secretValue(namespace: string, name: string, key: string): Promise<string | undefined> {
    const secret = await this.read<{ data?: Record<string, string> } & KubernetesObject>('v1', 'Secret', namespace, name);
    const value = secret?.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  }

  async close(): Promise<void> {
    this.closed = true;
    const closed = new Error('the Kubernetes driver is closed');
    this.pods.close(closed);
    this.jobs.close(closed);
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }
}

/**
 * The manifest as @kubernetes/client-node's serializer reads it: its models call a NetworkPolicy ingress rule's `from`
 * `_from` (a reserved word), and a plain `from` would be dropped on the way out, leaving a rule that admits every
 * source (found on the test cluster: `ingress: [{}]`).
 */
export function forClient(manifest: Manifest): KubernetesObject {
  const object = manifest as KubernetesObject & { spec?: { ingress?: Array<Record<string, unknown>> } };
  if (object.kind !== 'NetworkPolicy' || !object.spec?.ingress) return object;
  const ingress = object.spec.ingress.map(({ from, ...rule }) => (from === undefined ? rule : { ...rule, _from: from }));
  return { ...object, spec: { ...object.spec, ingress } } as KubernetesObject;
}
