// The JSON Schema of svc.yml (svc/v1): data in one place, used by the validator (validate.ts), served by the
// API at GET /api/v1/schemas/svc.json and used by editors through `# yaml-language-server: $schema=...`.
// Per-type service keys use if/then on `type` (understood by yaml-language-server, which follows draft-07
// semantics); `$ref` never has sibling keywords, so the meaning is the same under draft-07 and 2020-12.
// Two annotations are svc's own: `patternErrorMessage` (shown by VS Code and yaml-language-server when a
// pattern fails) and `x-svc-code` (the svc error code of a failed pattern, for the validator).
import * as names from './names.ts';
import { serviceProperties } from './schema-service.ts';
import type { JsonSchema } from './schema-types.ts';

export type { JsonSchema } from './schema-types.ts';

export const svcSchemaId = 'urn:svc:schema:svc-v1';

export const extensionKeys: Record<string, JsonSchema> = {
  '^x-': { description: 'Ignored by svc: keys starting with x- hold notes and YAML anchors.' },
};

const stepList = (description: string): JsonSchema => ({ type: 'array', description, items: { $ref: '#/$defs/step' } });

const step: JsonSchema = {
  type: 'object',
  description: 'A step, run with `bash -lc` in /data/app.',
  required: ['run'],
  properties: {
    name: {
      type: 'string',
      description: 'Label for the Run panel and logs; 1 to 100 characters.',
      minLength: names.limits.stepName.min,
      maxLength: names.limits.stepName.max,
    },
    run: { type: 'string', description: 'The command; several lines allowed; at least 1 character.', minLength: 1 },
  },
  patternProperties: extensionKeys,
  additionalProperties: false,
};

const service: JsonSchema = {
  type: 'object',
  description:
    'A service of the landscape. `type` picks the kind: steps (runs shell steps in every replica), container (runs an OCI image), managed (a provider-backed service such as a database) or forward (routes dev-domain paths to a URL).',
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      description: 'The kind of service: steps, container, managed or forward.',
      enum: [...names.serviceTypes],
    },
  },
  allOf: names.serviceTypes.map((type) => ({
    if: { properties: { type: { const: type } }, required: ['type'] },
    then: { $ref: `#/$defs/${type}Service` },
  })),
  defaultSnippets: [
    { label: 'new steps service', body: { type: 'steps', ports: [{ port: 3000, routes: [{ path: '/' }] }], steps: [{ run: '${1:npm start}' }] } },
    { label: 'new container service', body: { type: 'container', image: '${1:docker.io/library/nginx:1.27}', ports: [{ port: 80 }] } },
    { label: 'new managed service', body: { type: 'managed', provider: '${1:postgresql}' } },
    { label: 'new forward service', body: { type: 'forward', target: '${1:https://example.com}', routes: [{ path: '/${2:api}' }] } },
  ],
};

const closed = (title: string, description: string, required: string[], properties: Record<string, JsonSchema>): JsonSchema => ({
  type: 'object',
  title,
  description,
  required,
  properties,
  patternProperties: extensionKeys,
  additionalProperties: false,
});

const typeConst = (type: string): JsonSchema => ({ type: 'string', const: type, description: `The kind of service: ${type}.` });

const schema: JsonSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: svcSchemaId,
  title: 'svc.yml (svc/v1)',
  description:
    'A landscape: the services of a workspace and its prepare and test steps. Keys starting with x- are ignored; any other unknown key is an error. `${{ ... }}` templates are filled in at Sync.',
  type: 'object',
  required: ['schema'],
  properties: {
    schema: { type: 'string', const: 'svc/v1', description: 'Schema version of the file: svc/v1.' },
    prepare: stepList('Set-up steps: run in sequence in the editor pod in /data/app with the workspace environment variables but no secrets; the first failing step fails the stage.'),
    test: stepList('Test steps, run like prepare.'),
    services: {
      type: 'object',
      description: 'Services of the landscape by name. Sync creates, changes and removes them; Run starts their steps.',
      propertyNames: {
        pattern: `^(?:x-.*|${names.serviceNamePattern.slice(1, -1)})$`,
        patternErrorMessage: 'A service name has lowercase letters, digits and dashes, starts with a letter, does not end with a dash, at most 32 characters.',
      },
      patternProperties: extensionKeys,
      additionalProperties: { $ref: '#/$defs/service' },
    },
  },
  patternProperties: extensionKeys,
  additionalProperties: false,
  $defs: {
    step,
    service,
    stepsService: closed(
      'steps service',
      'A service that runs steps in every replica: all but the last step run once in sequence; the last is the server and is restarted with backoff.',
      ['type', 'steps'],
      { type: typeConst('steps'), ...serviceProperties.running, ...serviceProperties.steps },
    ),
    containerService: closed(
      'container service',
      "Runs an OCI image; the agent runs its ENTRYPOINT and CMD under the workspace's random UID, group 0. Sync pins the image digest.",
      ['type', 'image'],
      { type: typeConst('container'), ...serviceProperties.running, ...serviceProperties.container },
    ),
    managedService: closed(
      'managed service',
      'A provider-backed service bound to the landscape, such as a PostgreSQL database. Sync creates or changes it; Teardown pauses it; removing it from the file deletes it and its data.',
      ['type', 'provider'],
      { type: typeConst('managed'), ...serviceProperties.managed },
    ),
    forwardService: closed(
      'forward service',
      "Routes dev-domain paths to a URL (a Service of the team's namespace or an address the installation allows). No pods run.",
      ['type', 'target', 'routes'],
      { type: typeConst('forward'), ...serviceProperties.forward },
    ),
    ...serviceProperties.definitions,
  },
};

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** The JSON Schema of svc.yml, `$id` urn:svc:schema:svc-v1, draft 2020-12. Frozen: serve it as it is. */
export const svcSchema: JsonSchema = deepFreeze(schema);
