// @svc/sdk: the svc API's types generated from its OpenAPI document (src/generated/openapi.ts, by `npm run sdk`),
// a typed client (openapi-fetch), problems told apart by type, the event stream, and long-running operations.
import { createSvcApi, type SvcApi, type SvcOptions } from './client.ts';
import { svcEvents, type EventStreamOptions } from './events.ts';
import { followOperation, type FollowOptions } from './operations.ts';
import type { Operation, SvcEvent } from './resources.ts';

export type { components, paths } from './generated/openapi.ts';
export * from './resources.ts';
export { conventionHeaders, createSvcApi, idempotencyKey, ok, type SvcApi, type SvcOptions } from './client.ts';
export { isProblem, NOT_A_PROBLEM, problemOfAnswer, SvcProblem, unreachableProblem, type ProblemName, type ProblemType } from './problems.ts';
export { svcEvents, type EventStreamOptions } from './events.ts';
export { streamAddress, streamProtocols, type StreamAddress, type StreamParams, type StreamPath } from './streams.ts';
export { certificateLabels, verificationLabels } from './domains.ts';
export { useKindLabels } from './activity.ts';
export { followOperation, isFinished, OperationFailed, type FollowOptions } from './operations.ts';

export interface Svc {
  readonly options: SvcOptions;
  /** Every route, typed: `ok(await svc.api.GET('/api/v1/me'))`. */
  readonly api: SvcApi;
  /** The live events the caller may see, across reconnects (spec 6). */
  events(options?: EventStreamOptions): AsyncGenerator<SvcEvent>;
  /** Waits for a long-running operation to end (events, else polling). */
  followOperation(operation: Operation | string, options?: FollowOptions): Promise<Operation>;
}

export function createSvc(options: SvcOptions): Svc {
  const api = createSvcApi(options);
  return {
    options,
    api,
    events: (stream) => svcEvents(options, stream),
    followOperation: (operation, follow) => followOperation(options, operation, follow, api),
  };
}
