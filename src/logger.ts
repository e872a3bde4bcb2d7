import pino, { type Logger } from 'pino';
import type { LogLevel } from './config.js';

/** Never logged, wherever they appear. */
const REDACT = [
  'req.headers.sign',
  'req.headers.authorization',
  'secretKey',
  '*.secretKey',
  'secret_key',
  '*.secret_key',
];

/** JSON lines for machines; pretty lines when a person watches a terminal. */
export function createLogger(level: LogLevel, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { service: 'cashgate' },
  };
  if (destination !== undefined) return pino(options, destination);
  if (process.stdout.isTTY) {
    return pino({
      ...options,
      transport: {
        target: 'pino-pretty',
        options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' },
      },
    });
  }
  return pino(options);
}
