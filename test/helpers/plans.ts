// A plans file (docs/capacity.md) for tests: two workspace plans and two service plans with small limits.
export const PLANS_FILE = `# plans of the test installation
workspace:
  default: dev
  plans:
    dev: { title: Development, cpu: 1.5, memory: 3GiB, storageGib: 7 }
    big: { cpu: 4, memory: 8192, storageGib: 40 }
service:
  default: tiny
  plans:
    tiny: { cpu: 0.1, memory: 128MiB, maxReplicas: 3 }
    web: { title: Web, cpu: 0.5, memory: 512MiB, maxReplicas: 8, availability: on-demand }
`;
