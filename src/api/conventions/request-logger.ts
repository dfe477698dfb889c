// A request's logger, made when the request first logs. Fastify gives every request a pino child (its bindings
// serialized), which cost more than the rest of a small request's conventions together; most requests never log.
import type { FastifyBaseLogger } from 'fastify';

type LogMethod = (...args: unknown[]) => void;
type Bindings = Record<string, unknown>;

class RequestLogger {
  private made?: FastifyBaseLogger;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: object,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }
  get level(): string {
    return this.made?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.logger.level = level;
  }
  fatal(...args: unknown[]): void {
    (this.logger.fatal as LogMethod)(...args);
  }
  error(...args: unknown[]): void {
    (this.logger.error as LogMethod)(...args);
  }
  warn(...args: unknown[]): void {
    (this.logger.warn as LogMethod)(...args);
  }
  info(...args: unknown[]): void {
    (this.logger.info as LogMethod)(...args);
  }
  debug(...args: unknown[]): void {
    (this.logger.debug as LogMethod)(...args);
  }
  trace(...args: unknown[]): void {
    (this.logger.trace as LogMethod)(...args);
  }
  silent(...args: unknown[]): void {
    (this.logger.silent as LogMethod)(...args);
  }
  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: the request's logger, the pino child made on its first use. */
export function requestLogger(parent: FastifyBaseLogger, bindings: Bindings, options: object): FastifyBaseLogger {
  return new RequestLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
