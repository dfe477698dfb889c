// The server's release (Svc-Version, GET /version) and the API's own version (OpenAPI info.version).
// They move separately: a server release that changes no route keeps the API version.
export const SERVER_VERSION = '1.5.0';
export const API_VERSION = '1.5.0';
