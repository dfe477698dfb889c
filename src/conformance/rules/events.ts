// Spec 6 (events) and 4.6 (the stream): `ready` first, the stream's format, and the events tied to actions of the
// other rules (created, operation updates, deleted, landscape updates).
import { EventRecorder, type RecordedEvent } from '../events-recorder.ts';
import { mediaType } from '../http.ts';
import { isDateTime, isId } from '../shapes.ts';
import { check, described, fail, skip, type Rule, type SuiteContext } from '../suite.ts';

const eventWait = (context: SuiteContext) => Math.min(60_000, context.options.operationTimeoutMs);

/** Waits for an event matching `match`; fails naming `what` when none came. */
async function expectEvent(context: SuiteContext, what: string, match: (event: RecordedEvent) => boolean): Promise<RecordedEvent> {
  const events = context.events ?? skip(`no event stream: ${context.eventsMissing}`);
  const found = await events.waitFor(match, eventWait(context));
  return found ?? fail(`no ${what} event came within ${eventWait(context) / 1000} s (${events.events.length} events seen${events.ended ? '; the stream ended' : ''})`);
}

export const streamRules: Rule[] = [
  {
    section: '6',
    title: 'the event stream is text/event-stream and its first event is ready',
    async run(context) {
      const opened = await context.http.openEvents();
      if ([401, 403].includes(opened.response.status)) {
        opened.close();
        context.eventsMissing = 'this installation takes only a browser session on GET /events (spec 4.6 names the cookie)';
        skip(`${described(opened.response)} to an API key; spec 4.6 names the browser session`);
      }
      check(opened.events, `${described(opened.response)} with content type ${mediaType(opened.response.headers) || 'none'}, not 200 text/event-stream`);
      context.events = new EventRecorder(opened.events, opened.close);
      const first = await context.events.waitFor(() => true, eventWait(context));
      context.eventsMissing = 'the stream did not start with ready';
      check(first, `no event came within ${eventWait(context) / 1000} s`);
      check(first.name === 'ready', `the first event is "${first.name}", not ready`);
      check(first.data?.type === 'ready', 'the ready event\'s data has no "type": "ready"');
      context.eventsMissing = '';
    },
  },
];

export const workspaceEventRules: Rule[] = [
  {
    section: '6',
    title: 'creating a workspace emits workspace.created carrying the full workspace',
    async run(context) {
      const { id } = context.needWorkspace();
      const event = await expectEvent(context, 'workspace.created', (e) => e.name === 'workspace.created' && e.data?.workspace?.id === id);
      check(typeof event.data.workspace.name === 'string', 'the event\'s workspace has no name');
    },
  },
  {
    section: '6',
    title: 'every change of an operation emits operation.updated carrying the operation',
    async run(context) {
      const { createOperation } = context.needWorkspace();
      const updates = (e: RecordedEvent) => e.name === 'operation.updated' && e.data?.operation?.id === createOperation;
      await expectEvent(context, `operation.updated (succeeded) for ${createOperation}`, (e) => updates(e) && e.data.operation.state === 'succeeded');
    },
  },
  {
    section: '6',
    title: 'each event has an id line, an event line equal to data.type and data with an "at" date-time',
    async run(context) {
      const events = context.events ?? skip(`no event stream: ${context.eventsMissing}`);
      check(events.events.length > 0, 'no events were seen');
      for (const event of events.events) {
        const label = `event ${event.name} ${event.raw.slice(0, 80)}`;
        check(event.id !== undefined && event.id !== '', `${label} has no id line`);
        check(event.data && event.data.type === event.name, `${label}: data.type is not the event name`);
        check(isDateTime(event.data.at), `${label}: "at" is not a date-time`);
        for (const field of ['team_id', 'workspace_id', 'run_id']) {
          if (event.data[field] !== undefined) check(isId(event.data[field]), `${label}: ${field} is not an ID`);
        }
      }
    },
  },
];

export const deletedEventRules: Rule[] = [
  {
    section: '6',
    title: 'a soft delete emits workspace.deleted carrying the full workspace',
    async run(context) {
      const { id } = context.needWorkspace();
      await expectEvent(context, 'workspace.deleted', (e) => e.name === 'workspace.deleted' && e.data?.workspace?.id === id);
    },
  },
];

export const landscapeEventRules: Rule[] = [
  {
    section: '6',
    title: 'Sync emits landscape.updated for the workspace',
    async run(context) {
      const { id } = context.needWorkspace();
      if (!context.options.repo) skip('no landscape was synced (give --repo)');
      await expectEvent(context, 'landscape.updated', (e) => e.name === 'landscape.updated' && e.data?.workspace_id === id);
    },
  },
];
