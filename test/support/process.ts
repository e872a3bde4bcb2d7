import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/src/cli.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI to completion with the given environment (on top of PATH only). */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  /** The server's base URL ('' for a worker). */
  url: string;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Kills the process at once (SIGKILL), as a crash or a power cut would. */
  kill(): Promise<void>;
}

/** Calls a server process's admin API with a bearer token. */
export async function adminCall(
  server: Pick<ServerProcess, 'url'>,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const response = await fetch(new URL(path, server.url), {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const READY_LINES = { serve: 'Cashgate is serving', worker: 'Cashgate worker is running' } as const;

/** Starts `cashgate serve` (or `cashgate worker`) in its own process and waits for its ready log line. */
export function startServerProcess(
  env: Record<string, string>,
  command: 'serve' | 'worker' = 'serve',
  /** Options for Node.js itself (e.g. a benchmark's --cpu-prof). */
  nodeOptions: readonly string[] = [],
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeOptions, CLI, command], {
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', ...env },
  });
  let output = '';
  let started = false;
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in 20 s:\n${output}`));
    }, 20_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (started) return;
      const complete = output.split('\n').slice(0, -1);
      for (const line of complete) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === READY_LINES[command]) {
          started = true;
          clearTimeout(timer);
          resolve({
            url: entry.url ?? '',
            child,
            output: () => output,
            stop: () => {
              child.kill('SIGTERM');
              return exited;
            },
            kill: async () => {
              child.kill('SIGKILL');
              await exited;
            },
          });
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      if (!started) reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}
