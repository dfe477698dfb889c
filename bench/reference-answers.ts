// The JSON the reference servers of bench/api answer (bare-server.ts, fastify-floor-server.ts): what svc answers
// for GET /api/v1/version and GET /api/v1/me with the administrator's key, and svc's Svc-Version header.
import { API_VERSION, SERVER_VERSION } from '../src/core/version.ts';

export const versionAnswer = JSON.stringify({ version: SERVER_VERSION, api_version: API_VERSION });
export const releaseHeader = { 'svc-version': SERVER_VERSION };
export const meAnswer = JSON.stringify({
  id: 1,
  email: 'admin@localhost',
  name: 'Administrator',
  permissions: ['platform.admin'],
  has_password: false,
  created_at: new Date().toISOString(),
  authenticated_by: 'key',
});
