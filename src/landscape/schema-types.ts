// The part of JSON Schema (2020-12) that the svc schema uses; validate.ts supports exactly these keywords.

export interface JsonSchema {
  $schema?: string;
  $id?: string;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  $comment?: string;
  title?: string;
  description?: string;
  default?: unknown;
  examples?: unknown[];
  type?: JsonType | JsonType[];
  const?: unknown;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  required?: string[];
  allOf?: JsonSchema[];
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
  /** Editor extension (VS Code, yaml-language-server): message shown when `pattern` fails. */
  patternErrorMessage?: string;
  /** Editor extension: completion snippets. */
  defaultSnippets?: { label: string; description?: string; body: unknown }[];
  /** svc's own: the error code of a failed `pattern` (instead of `pattern`). */
  'x-svc-code'?: string;
}

export type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';
