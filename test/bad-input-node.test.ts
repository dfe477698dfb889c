// The bad-input cases (test/bad-input.test.ts) again with svc alone as the data plane (--data-plane node): a NUL in
// a path then reaches svc, which must refuse it as a 422 naming the parameter.
process.env.SVC_DATA_PLANE = 'node';
await import('./bad-input.test.ts');
