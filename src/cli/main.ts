// `svc`: one entry point, one module per command group.
import { SERVER_VERSION } from '../core/version.ts';

const usage = `svc ${SERVER_VERSION}: development workspaces

Usage:
  svc server [options]                     run the platform (svc server --help for options)
  svc admin sign-in-link [--user EMAIL] [--data-dir DIR]
                                           print a one-time sign-in link (on the server's machine)
  svc lint [FILE] [--profile P] [--json]   check a svc.yml file offline
  svc version                              print the version
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const io = {
    stdout: (text: string) => process.stdout.write(text),
    stderr: (text: string) => process.stderr.write(text),
    cwd: process.cwd(),
  };
  switch (command) {
    case 'server':
      return (await import('./server.ts')).serverCommand(rest, io);
    case 'admin':
      return (await import('./admin.ts')).adminCommand(rest, io);
    case 'lint':
      return (await import('./lint.ts')).lintCommand(rest, io);
    case 'version':
    case '--version':
      io.stdout(`${SERVER_VERSION}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.stdout(usage);
      return 0;
    default:
      io.stderr(`svc: unknown command "${command}"\n\n${usage}`);
      return 2;
  }
}

export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  cwd: string;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.exitCode = await main(process.argv.slice(2));
}
