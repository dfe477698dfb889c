// The odd requests of test/router-errors.test.ts again with svc alone as the data plane (--data-plane node): the
// answers must be the same as with nginx in front.
process.env.SVC_DATA_PLANE = 'node';
await import('./router-errors.test.ts');
