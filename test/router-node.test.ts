// The router's end-to-end cases (test/router.test.ts) again with svc alone as the data plane (--data-plane node):
// behaviour must be the same as with nginx in front, the default.
process.env.SVC_DATA_PLANE = 'node';
await import('./router.test.ts');
