// The bad-input cases (test/bad-input.test.ts) again with svc alone as the data plane (--data-plane node): svc
// answers what nginx would have refused (a %00 in a path) itself, with the same problems.
process.env.SVC_DATA_PLANE = 'node';
await import('./bad-input.test.ts');
