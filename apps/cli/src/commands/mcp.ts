import { runStdioServer, stdioSettings, StdioSettingsError } from '@lectern/mcp';
import { UsageError } from '../usage-error.js';

/**
 * `lectern mcp`: the MCP tool server on stdin/stdout for a local AI client, talking to a running service over HTTP
 * (LECTERN_URL, LECTERN_API_KEY). Loads only the tool server and its SDK: no database, bus or object store.
 */
export async function mcpCommand(argv: string[]): Promise<void> {
  let settings;
  try {
    settings = stdioSettings(process.env, argv);
  } catch (err) {
    if (err instanceof StdioSettingsError) throw new UsageError(err.message, 64);
    throw err;
  }
  try {
    await runStdioServer(settings);
  } catch (err) {
    if (err instanceof StdioSettingsError) throw new UsageError(err.message, 69);
    if (err instanceof TypeError && /fetch failed/.test(err.message))
      throw new UsageError(
        `lectern mcp: cannot reach ${settings.url} (${String(err.cause ?? err.message)})`,
        69,
      );
    throw err;
  }
}
