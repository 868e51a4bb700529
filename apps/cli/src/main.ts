#!/usr/bin/env node
/**
 * The lectern command: reads argv and runs one command (apps/cli/src/commands/<command>.ts). Each command reads
 * and validates only the variables it uses; a command module is loaded only when run, so `lectern key create`
 * never loads the API.
 */
import { UsageError } from './usage-error.js';

const USAGE = `lectern — Lectern admin command

  lectern migrate
  lectern workspace create --name NAME --plan sandbox|build|scale|partner [--json]
  lectern workspace set-plan WORKSPACE_ID PLAN
  lectern workspace billing WORKSPACE_ID --past-due --grace-until ISO
  lectern workspace billing WORKSPACE_ID --paid
  lectern key create --workspace WORKSPACE_ID --scope read|write [--json]
  lectern key revoke KEY_ID
  lectern start            migrate, provision, run the API and every worker kind in one process
  lectern worker KIND…     run worker kinds (webhook, csv, certificate, scorm) in one process;
                           with no KIND, the kinds named in LECTERN_WORKERS (lectern worker --help)
  lectern doctor           check every dependency and say how to fix what is wrong
  lectern mcp [--toolsets a,b] [--read-only]
                           the MCP tool server on stdio, for a running service (LECTERN_URL, LECTERN_API_KEY)

Configuration comes from environment variables; see .env.example.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    case 'migrate':
      return (await import('./commands/migrate.js')).migrateCommand();
    case 'workspace':
      return (await import('./commands/workspace.js')).workspaceCommand(rest);
    case 'key':
      return (await import('./commands/key.js')).keyCommand(rest);
    case 'start':
      return (await import('./commands/start.js')).startCommand();
    case 'worker':
      return (await import('./commands/worker.js')).workerCommand(rest);
    case 'mcp':
      return (await import('./commands/mcp.js')).mcpCommand(rest);
    case 'doctor':
      process.exit(await (await import('./commands/doctor.js')).doctorCommand());
  }
  throw new UsageError(`unknown command: ${argv.join(' ')}`, 2);
}

main(process.argv.slice(2)).catch(async (err: unknown) => {
  if (err instanceof UsageError) fail(err.code === 2 ? `${err.message}\n\n${USAGE}` : err.message, err.code);
  // Loaded only to classify a failure, so a command that does not use them (mcp) never pays for loading them.
  const [{ ConfigError }, { isAppError }, { JobRegistryError }] = await Promise.all([
    import('@lectern/config'),
    import('@lectern/errors'),
    import('@lectern/jobs'),
  ]);
  if (err instanceof ConfigError) fail(err.message, 78);
  if (err instanceof JobRegistryError) fail(err.message, 70);
  if (isAppError(err)) fail(`${err.code}: ${err.message}`);
  fail(`error: ${(err as Error)?.stack ?? String(err)}`);
});
