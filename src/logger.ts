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
  return pino(options, standardOutput());
}

/**
 * Standard output, written asynchronously: the lines logged while a write is in progress go out
 * together in the next one, instead of a write to the pipe per line on the event loop (under load,
 * a request's log line cost more than the rest of its logging). What is still buffered when the
 * process exits, however it exits, is written before it ends.
 */
function standardOutput(): pino.DestinationStream {
  const destination = pino.destination({ dest: 1, sync: false });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // Standard output is gone (a closed pipe): there is nowhere left to write.
    }
  });
  return destination;
}
