// A node:test reporter that writes one line per test event to its destination (a file scripts/run-tests.ts reads):
// `<ms since start>\t<event>\t<file>\t<nesting>\t<name>\t<duration ms of a pass or fail>`. A test is running
// from its dequeue to its pass or fail. Events of a file reach reporters only once the files before it reported, so a
// file's time is the sum of its top-level tests' own durations, not a span of event times. run-tests.ts names what was still running when its deadline came
// and the slowest files at the end, so a CI log's tail says where the time went.
const started = Date.now();
const kinds = new Set(['test:dequeue', 'test:pass', 'test:fail']);

export default async function* progress(source) {
  for await (const event of source) {
    if (!kinds.has(event.type)) continue;
    const { file = '', nesting = 0, name = '', details } = event.data;
    yield `${Date.now() - started}\t${event.type.slice(5)}\t${file}\t${nesting}\t${String(name).replace(/[\t\n]/g, ' ')}\t${details?.duration_ms ?? ''}\n`;
  }
}
