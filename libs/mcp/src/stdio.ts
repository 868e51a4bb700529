import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { BinaryStore } from './answers.js';
import { fetchOperationCaller, serviceRoot, type OperationCaller } from './caller.js';
import { catalogueFromOpenApi, type Catalogue, type OpenApiDocument } from './catalogue.js';
import { createLecternMcpServer, parseToolsets, type Toolset } from './server.js';

export interface StdioSettings {
  /** The service root (`http://localhost:8080`); a value ending in `/api/v1` works too. */
  url: string;
  apiKey: string;
  toolsets: Toolset[];
  readOnly: boolean;
}

export class StdioSettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StdioSettingsError';
  }
}

const truthy = (v: string | undefined) => v !== undefined && /^(1|true|yes)$/i.test(v);

/**
 * `lectern mcp [--toolsets a,b] [--read-only]` with LECTERN_URL and LECTERN_API_KEY. Flags win over
 * LECTERN_MCP_TOOLSETS and LECTERN_MCP_READ_ONLY.
 */
export function stdioSettings(env: NodeJS.ProcessEnv, argv: string[]): StdioSettings {
  let toolsets = env.LECTERN_MCP_TOOLSETS;
  let readOnly = truthy(env.LECTERN_MCP_READ_ONLY);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--read-only') readOnly = true;
    else if (a === '--toolsets') toolsets = argv[++i] ?? '';
    else if (a.startsWith('--toolsets=')) toolsets = a.slice('--toolsets='.length);
    else
      throw new StdioSettingsError(`lectern mcp: unknown argument ${a} (use --toolsets a,b and --read-only)`);
  }
  const apiKey = env.LECTERN_API_KEY ?? '';
  if (!apiKey) throw new StdioSettingsError('lectern mcp: set LECTERN_API_KEY to an API key (lk_…)');
  const url = env.LECTERN_URL ?? 'http://localhost:8080';
  try {
    serviceRoot(url);
  } catch {
    throw new StdioSettingsError(`lectern mcp: LECTERN_URL is not a URL: ${url}`);
  }
  try {
    return { url, apiKey, toolsets: parseToolsets(toolsets), readOnly };
  } catch (err) {
    throw new StdioSettingsError(`lectern mcp: ${(err as Error).message}`);
  }
}

/** Binary answers become private files in the temporary directory, removed after LINK_SECONDS; the link is a file: URL. */
const LINK_SECONDS = 15 * 60;

export function tempFileStore(root = os.tmpdir()): BinaryStore {
  return {
    async save(bytes, meta) {
      // mkdtemp: a new folder only this user can enter, never one another user prepared in a shared /tmp.
      const folder = await mkdtemp(path.join(root, 'lectern-mcp-'));
      const name = path.basename(meta.filename).replace(/[^\w.-]/g, '_');
      const file = path.join(folder, /^\.*$/.test(name) ? 'download' : name);
      await writeFile(file, bytes, { mode: 0o600, flag: 'wx' });
      setTimeout(() => {
        rm(folder, { recursive: true, force: true }).catch((err: unknown) =>
          process.stderr.write(`lectern mcp: could not remove ${folder}: ${String(err)}\n`),
        );
      }, LINK_SECONDS * 1000).unref();
      return {
        url: pathToFileURL(file).href,
        expiresAt: new Date(Date.now() + LINK_SECONDS * 1000).toISOString(),
      };
    },
  };
}

/** The operation catalogue of a running service: its published OpenAPI document. */
export async function loadCatalogue(url: string, doFetch: typeof fetch = fetch): Promise<Catalogue> {
  const res = await doFetch(`${serviceRoot(url)}/api/v1/openapi.json`);
  if (!res.ok)
    throw new StdioSettingsError(
      `lectern mcp: GET ${serviceRoot(url)}/api/v1/openapi.json answered ${res.status}`,
    );
  return catalogueFromOpenApi((await res.json()) as OpenApiDocument);
}

/**
 * The key's scope as the service reports it (`GET /api/v1/me` `key_scope`), or null when it does not say (an older
 * service, a refused key: the calls then answer for themselves).
 */
export async function keyScope(
  url: string,
  apiKey: string,
  doFetch: typeof fetch = fetch,
): Promise<string | null> {
  const res = await doFetch(`${serviceRoot(url)}/api/v1/me`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  if (!res.ok) {
    await res.body?.cancel();
    return null;
  }
  const me = (await res.json()) as { key_scope?: unknown };
  return typeof me.key_scope === 'string' ? me.key_scope : null;
}

/**
 * Serves the tool server on stdin/stdout until stdin closes. `caller` defaults to the minimal fetch caller; the typed
 * client fits the same OperationCaller interface.
 */
export async function runStdioServer(
  settings: StdioSettings,
  opts: { caller?: (catalogue: Catalogue) => OperationCaller } = {},
): Promise<void> {
  const [catalogue, scope] = await Promise.all([
    loadCatalogue(settings.url),
    keyScope(settings.url, settings.apiKey),
  ]);
  const caller =
    opts.caller?.(catalogue) ??
    fetchOperationCaller({ baseUrl: settings.url, apiKey: settings.apiKey, catalogue });
  const server = createLecternMcpServer({
    catalogue,
    caller,
    binary: tempFileStore(),
    toolsets: settings.toolsets,
    // A read key sees only read tools, as on /mcp: the service says which scope the key has (GET /me).
    readOnly: settings.readOnly || scope === 'read',
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  await closed;
}
