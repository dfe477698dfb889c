// The landscape file svc.yml (spec 2.8): a pure library with no I/O, used by the API, the runtime and the CLI.
export { parseLandscape, landscapeProblem, type ParseLandscapeOptions, type ParseLandscapeResult } from './parse-landscape.ts';
export { landscapeErrorCodes, type LandscapeError, type LandscapeErrorCode } from './codes.ts';
export { svcSchema, svcSchemaId, type JsonSchema } from './schema.ts';
export { normalizeLandscape, compareLandscapes, landscapeHash, canonicalJson, type LandscapeComparison, type LandscapeVersion } from './normal-form.ts';
export {
  environmentChanges,
  planLandscape,
  servicesToRestart,
  type EnvironmentComparison,
  type LandscapePlan,
  type ServiceAction,
  type ServiceChange,
  type ServiceEnvironments,
  type StageChange,
} from './plan.ts';
export { shortDigest, withPlanImages, type ImageResolution, type PlanImage } from './plan-images.ts';
export { parseTemplate, hasTemplate, referenceName, templateRoots, type ParsedTemplate, type TemplateError, type TemplateExpression, type TemplatePart, type TemplateReference } from './templates.ts';
export { fillTemplates, referencedSecrets, type FillResult, type ManagedServiceValues, type TemplateContext } from './template-fill.ts';
export { placeErrors, placeProblem } from './places.ts';
export { profileNamePattern, defaultLandscapeFileName, isProfileName, profileFileName, profileOfFileName, profilesInDirectory } from './profiles.ts';
export { sizeInMiB } from './sizes.ts';
export { listWords, quote } from './messages.ts';
export * as landscapeNames from './names.ts';
export { defaultLandscapeDefaults, servicePlanDefaults } from './types.ts';
export type {
  Availability,
  ConfigValue,
  ContainerService,
  EnvValue,
  ForwardService,
  HealthCheck,
  HealthMode,
  Landscape,
  LandscapeDefaults,
  ManagedService,
  Mount,
  NormalContainerService,
  NormalForwardService,
  NormalHealthCheck,
  NormalLandscape,
  NormalManagedService,
  NormalPort,
  NormalRoute,
  NormalService,
  NormalStepsService,
  Port,
  Route,
  Service,
  ServicePlanDefaults,
  ServiceType,
  Step,
  StepsService,
} from './types.ts';
