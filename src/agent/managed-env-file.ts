// Where the server keeps the managed services' connection values in the editor pod (src/workspaces/managed-shell-file.ts):
// in the pod's own /tmp (memory), for the editor's terminals to read.
export const MANAGED_ENV_FILE = '/tmp/svc/managed-services.env';
