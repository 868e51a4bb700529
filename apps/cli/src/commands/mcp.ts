import { fetchOperationCaller, runStdioServer, stdioSettings, StdioSettingsError } from '@lectern/mcp';
import { UsageError } from '../usage-error.js';

/**
 * `lectern mcp`: the MCP tool server on stdin/stdout for a local AI client, talking to a running service over HTTP
 * (LECTERN_URL, LECTERN_API_KEY) through @lectern/client. Loads only the tool server, its SDK and the client: no
 * database, bus or object store.
 */
export async function mcpCommand(argv: string[]): Promise<void> {
  let settings;
  try {
    settings = stdioSettings(process.env, argv);
  } catch (err) {
    if (err instanceof StdioSettingsError) throw new UsageError(err.message, 64);
    throw err;
  }
  // Calls go through the typed client (@lectern/client): the same request building, auth and retry rules as
  // any integration; one retry of a 429 at most, so a rate-limited model sees rate_limited instead of waiting.
  const { LecternClient, OPERATIONS } = await import('@lectern/client');
  const client = new LecternClient({
    baseUrl: settings.url,
    apiKey: settings.apiKey,
    maxRateLimitRetries: 1,
  });
  try {
    await runStdioServer(settings, {
      // An operation the client does not know yet (a service newer than this CLI) is built from the service's
      // own document instead, so every operation the service serves stays reachable.
      caller: (catalogue) => {
        const fallback = fetchOperationCaller({ baseUrl: settings.url, apiKey: settings.apiKey, catalogue });
        return {
          call: (operationId, input) =>
            operationId in OPERATIONS
              ? client.callOperation(operationId, input as never)
              : fallback.call(operationId, input),
        };
      },
    });
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
