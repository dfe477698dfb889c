// `svc server`: runs the platform until SIGINT or SIGTERM, then shuts down in order.
import { ConfigError, loadServerConfig, serverUsage } from '../core/config.ts';
import { loadPlans } from '../capacity/plans-file.ts';
import { managedCatalog } from '../managed/catalog.ts';
import { parseSmtpUrl, redact, SmtpUrlError } from '../mail/smtp-url.ts';
import { SERVER_VERSION } from '../core/version.ts';
import { startServer } from '../server.ts';
import { loadWildcardCertificate } from '../domains/wildcard.ts';
import type { CommandIo } from './main.ts';
import { loadOidcProviders, ProviderSettingsError } from '../auth/oidc/index.ts';

export async function serverCommand(argv: string[], io: CommandIo): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(`${serverUsage()}\n`);
    return 0;
  }
  let config;
  try {
    config = loadServerConfig(argv, process.env, io.cwd);
    // A plans file that breaks a rule stops the server here, with the place and the rule.
    config.plans = await loadPlans(config.plansFile);
    // A disabled version the catalog does not have, or managed plans that do not fit their provider, is a mistake
    // the operator hears about before the server starts.
    managedCatalog(config.managedDisabled, config.plans);
    if (config.smtpUrl !== undefined) parseSmtpUrl(config.smtpUrl);
    // Single sign-on settings that break a rule stop the server here, naming the provider and the rule.
    await loadOidcProviders(config, process.env);
    // A wildcard certificate that cannot serve (key, chain, expiry) stops the server here, saying why.
    if (config.tlsWildcardCert) {
      await loadWildcardCertificate(config.tlsWildcardCert, config.tlsWildcardKey!, new Date()).catch((error: Error) => {
        throw new ConfigError(error.message);
      });
    }
  } catch (error) {
    if (!(error instanceof ConfigError) && !(error instanceof SmtpUrlError) && !(error instanceof ProviderSettingsError)) throw error;
    io.stderr(`svc server: ${error.message}\n\n${serverUsage()}\n`);
    return 2;
  }
  // Signals are handled from the first moment: one arriving while the server starts stops it once started.
  let stopRequested: ((signal: string) => void) | undefined;
  const signalled = new Promise<string>((resolve) => (stopRequested = resolve));
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      io.stderr(`svc server: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopRequested!(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let server;
  try {
    server = await startServer(config, { logger: {} });
  } catch (error) {
    // a start that cannot go on (no cluster for --runtime kubernetes, a database that refuses) says why, in one line
    io.stderr(`svc server: ${(error as Error).message}\n`);
    return 1;
  }
  io.stdout(`svc ${SERVER_VERSION} listening on ${server.url}\n`);
  io.stdout(`Console: ${server.url}/\n`);
  io.stdout(`Database: ${server.database.embedded ? `embedded, in ${config.dataDir}/postgres` : 'DATABASE_URL'}\n`);
  const tlsPort = server.tlsPort();
  if (tlsPort !== undefined) io.stdout(`TLS: ${config.tlsListen!.host}:${tlsPort}${server.wildcard ? `, wildcard certificate for ${server.wildcard.certificate.names.join(', ')}` : ''}\n`);
  io.stdout(`Mail: ${config.smtpUrl ? `${redact(config.smtpUrl)}, from ${config.mailFrom}` : 'no mail server (--smtp-url); invitation links are shown to the inviter'}\n`);
  if (server.firstSignInLink) {
    io.stdout(`First start: sign in as ${config.adminEmail} with this one-time link (valid ${config.signInLinkMinutes} min):\n`);
    io.stdout(`  ${server.firstSignInLink}\n`);
  }
  const signal = await signalled;
  io.stdout(`svc server: ${signal}, shutting down\n`);
  try {
    await server.close();
  } catch (error) {
    io.stderr(`svc server: shutdown failed: ${(error as Error).message}\n`);
    return 1;
  }
  return 0;
}
