// The JSON the reference servers of bench/api answer (bare-server.ts, fastify-floor-server.ts): what svc answers
// for GET /api/v1/version and GET /api/v1/me with the administrator's key.
export const versionAnswer = JSON.stringify({ version: '1.5.0', api_version: '1.5.0' });
export const meAnswer = JSON.stringify({
  id: 1,
  email: 'admin@localhost',
  name: 'Administrator',
  permissions: ['platform.admin'],
  has_password: false,
  created_at: new Date().toISOString(),
  authenticated_by: 'key',
});
