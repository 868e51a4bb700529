/**
 * The MCP tool server: one server over the API's operation catalogue, served on stdio (`lectern mcp`) and on the
 * API's Streamable HTTP endpoint (/mcp). Every tool runs operations through an OperationCaller, i.e. the REST API
 * itself; this library adds no rule of its own (docs/mcp.md).
 */
export {
  catalogueFromOpenApi,
  searchOperations,
  type Catalogue,
  type JsonSchema,
  type OpenApiDocument,
  type Operation,
} from './catalogue.js';
export {
  buildRequest,
  decodeBody,
  fetchOperationCaller,
  serviceRoot,
  UnknownOperationError,
  type BuiltRequest,
  type OperationAnswer,
  type OperationCaller,
  type OperationInput,
} from './caller.js';
export { DEFAULT_PAGE_LIMIT, MAX_LIST_ITEMS, type BinaryStore } from './answers.js';
export {
  createLecternMcpServer,
  parseToolsets,
  ToolsetError,
  TOOLSETS,
  type LecternMcpOptions,
  type Toolset,
} from './server.js';
export {
  loadCatalogue,
  runStdioServer,
  stdioSettings,
  StdioSettingsError,
  tempFileStore,
  type StdioSettings,
} from './stdio.js';
