// Name and value rules of the landscape file (spec 2.8), in one place: the JSON Schema, the semantic
// checks, the templates and the docs all read them from here.

/** Service names, also the entries of `needs`. */
export const serviceNamePattern = '^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$';
/** Environment variable names of `env`. */
export const envNamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
/** Names of a managed service's `secrets`, and the K of `${{ secrets.K }}`. */
export const secretNamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,127}$';
/** Names of a managed service's `resources`. */
export const resourceNamePattern = '^[A-Za-z_][A-Za-z0-9_]{0,63}$';
/** Service plan ids and managed-service plan ids. */
export const planPattern = '^[a-z0-9][a-z0-9-]{0,62}$';
/** Provider names of managed services. */
export const providerPattern = '^[a-z][a-z0-9-]{0,62}$';
/** Image references of `steps` and `container` services. */
export const imagePattern = '^[a-z0-9][A-Za-z0-9._:/@-]*[A-Za-z0-9]$';
/** Route paths (ports and forward services). */
export const routePathPattern = "^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$";
/** Forward targets: an http(s) URL or a template that gives one. */
export const forwardTargetPattern = '^(https?://|\\$\\{\\{)';
/** Sizes in managed `resources`: MiB as a number, or a size with a binary unit. */
export const sizePattern = '^[0-9]+(\\.[0-9]+)? ?(Mi|MiB|Gi|GiB)$';
/** A managed secret's value: exactly one reference to a workspace secret. */
export const secretReferencePattern = '^\\$\\{\\{[ \\t]*secrets\\.[A-Za-z_][A-Za-z0-9_]{0,127}[ \\t]*\\}\\}$';
/** Environment variable names the platform reserves. */
export const reservedEnvPrefix = 'SVC_';
/** The editor of a workspace: a name that `needs` cannot list. */
export const editorServiceName = 'ide';
/** Keys starting with this prefix are ignored everywhere (notes, YAML anchors). */
export const extensionKeyPrefix = 'x-';

export const serviceTypes = ['steps', 'container', 'managed', 'forward'] as const;
export const availabilities = ['always', 'on-demand'] as const;
export const healthModes = ['any-http', 'http-2xx'] as const;

export const limits = {
  stepName: { min: 1, max: 100 },
  replicas: { min: 1, max: 100 },
  idleTimeoutMinutes: { min: 1, max: 1440 },
  port: { min: 1, max: 65535 },
  runAsUser: { min: 0, max: 2147483647 },
  image: { max: 512 },
  routePath: { max: 256 },
  healthPath: { max: 256 },
  mountPath: { min: 1, max: 1024 },
  needs: { max: 64 },
  providerVersion: { min: 1, max: 64 },
} as const;

const serviceName = new RegExp(serviceNamePattern);
const envName = new RegExp(envNamePattern);
const secretName = new RegExp(secretNamePattern);

export const isServiceName = (name: string): boolean => serviceName.test(name);
export const isEnvName = (name: string): boolean => envName.test(name);
export const isSecretName = (name: string): boolean => secretName.test(name);
export const isExtensionKey = (key: string): boolean => key.startsWith(extensionKeyPrefix);
