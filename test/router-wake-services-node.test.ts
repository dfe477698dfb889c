// test/router-wake-services.test.ts again with svc alone as the data plane (--data-plane node): a waking
// workspace's services answer before its editor with either data plane.
process.env.SVC_DATA_PLANE = 'node';
await import('./router-wake-services.test.ts');
