// Stable error codes of svc.yml. Clients branch on them; docs/svc-yml.md shows an example of each.
import type { ProblemFieldError } from '../core/problems.ts';

export const landscapeErrorCodes = {
  'yaml-syntax': 'the text is not well-formed YAML, holds more than one document, or uses a tag svc does not know',
  'yaml-alias': 'an alias names no anchor, refers to a node that contains it, or aliases expand too much',
  'too-deep': 'values nest deeper than the reader allows',
  'duplicate-key': 'a key appears twice in the same map',
  'unknown-key': 'a key that svc/v1 does not define here (keys starting with x- are ignored)',
  type: 'a value of the wrong type (for example text where a number belongs), or a key that is not text',
  enum: 'a value that is not one of the allowed words',
  pattern: 'text or a name that does not have the required form',
  'out-of-range': 'a number outside its bounds, replicas above maxReplicas or the plan, or a managed resource outside its plan\'s bounds',
  'too-long': 'text or a list longer than allowed',
  'too-short': 'text or a list shorter than allowed',
  required: 'a required key is missing',
  'duplicate-item': 'a list that must not repeat an entry repeats one',
  'unknown-plan': 'a service plan the installation does not have, or a plan the managed service\'s provider does not have',
  'unknown-provider': 'a managed-service provider that is not in the installation\'s catalog',
  'unknown-version': 'a providerVersion the provider does not have, or one the installation disabled',
  'unknown-resource': 'a resource the managed service\'s provider does not have',
  'unknown-secret': 'a managed service secret its provider does not take',
  'invalid-config': 'a managed service\'s config that breaks its provider\'s schema',
  'update-forbidden': 'a change to a managed service that its provider does not allow after creation',
  'needs-unknown': 'needs names a service that the file does not have',
  'needs-cycle': 'services need each other in a cycle, or a service needs itself',
  'needs-ide': 'needs names ide, the workspace editor',
  'port-duplicate': 'a service lists the same port twice',
  'port-not-declared': 'the health check uses a port the service does not list',
  'public-port-duplicate': 'two services make the same port public',
  'route-duplicate': 'two routes of the landscape have the same path',
  'invalid-path': 'a route or health path that is not a clean URL path',
  'path-escape': 'a mount source that leaves /data/app',
  'invalid-size': 'a resource size that is not a whole number of MiB',
  'invalid-url': 'a forward target that is not an http(s) URL',
  'reserved-env-name': 'an environment variable name starting with SVC_, which the platform reserves',
  'secret-reference': 'a managed secret whose value is not exactly one ${{ secrets.K }}',
  'template-syntax': 'a ${{ ... }} template that cannot be read',
  'template-unknown': 'a template naming something that does not exist',
  'template-not-allowed': 'a template where templates are not filled in, or a reference that place does not allow',
} as const;

export type LandscapeErrorCode = keyof typeof landscapeErrorCodes;

/** One error of a landscape file, as listed in the `errors` of an invalid-landscape problem. */
export interface LandscapeError extends ProblemFieldError {
  /** JSON Pointer into the file (the place of a missing key for `required`). */
  pointer: string;
  message: string;
  /** 1-based line of the offending key or value. */
  line: number;
  /** 1-based column (UTF-16 code units) of the offending key or value. */
  column: number;
  code: LandscapeErrorCode;
  /** The service concerned, or the key for key errors, or the top-level key. */
  subject: string;
}

export type Segment = string | number;

/** An error before it gets its line and column: where it is as an offset into the text. */
export interface Issue {
  code: LandscapeErrorCode;
  offset: number;
  path: Segment[];
  message: string;
  /** Set for key errors (unknown, duplicate, required, bad name); else derived from the path. */
  subject?: string;
}
