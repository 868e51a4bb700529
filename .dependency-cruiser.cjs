/**
 * The dependency rules between apps and libs (docs/architecture.md). `make lint` runs them; a rule broken here
 * fails CI. Libraries are npm workspaces (`@lectern/<name>`); dependency-cruiser follows the workspace symlinks to
 * the real files, so "imported through its entry" means "the target file is the package's src/index.ts".
 */
// A package's entries: src/index.ts, and the subpaths its package.json exports (@lectern/db/ids, @lectern/client/webhooks).
const ENTRY = '^(libs|apps)/[^/]+/src/index\\.ts$|^libs/db/src/ids\\.ts$|^libs/client/src/webhooks\\.ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'import-through-entry',
      severity: 'error',
      comment:
        'Another package is imported only through its public entry (its package name, which resolves to ' +
        'src/index.ts), never by a relative path into its files.',
      from: { path: '^(libs|apps)/([^/]+)/' },
      to: { path: '^(libs|apps)/', pathNot: ['^$1/$2/', ENTRY] },
    },
    {
      name: 'tests-through-entry',
      severity: 'error',
      comment: 'Tests and benchmarks use a package the way its callers do: through its entry.',
      from: { path: '^test/' },
      to: { path: '^(libs|apps)/', pathNot: ENTRY },
    },
    {
      name: 'no-lib-to-app',
      severity: 'error',
      comment: 'A library never imports an app: apps wire libraries together, not the other way round.',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'apps-stand-alone',
      severity: 'error',
      comment:
        'Apps never import each other; the one exception is the CLI, whose `lectern start` runs the API ' +
        'in-process through the API app entry.',
      from: { path: '^apps/([^/]+)/', pathNot: '^apps/cli/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'cli-only-api-entry',
      severity: 'error',
      comment: 'The CLI reaches other apps only through the API entry.',
      from: { path: '^apps/cli/' },
      to: { path: '^apps/', pathNot: ['^apps/cli/', '^apps/api/src/index\\.ts$'] },
    },
    {
      name: 'contracts-is-the-leaf',
      severity: 'error',
      comment: 'contracts holds request/response/event/job schemas only and imports no other library.',
      from: { path: '^libs/contracts/' },
      to: { path: '^(libs|apps)/', pathNot: '^libs/contracts/' },
    },
    {
      name: 'webhooks-only-from-apps',
      severity: 'error',
      comment:
        'Only apps and job-registry (which composes every worker kind for the worker host) wire webhooks in; ' +
        'no other library imports @lectern/webhooks. What other capabilities used to take from it is neutral: ' +
        'outbound fetches and the private-network flag are @lectern/outbound, the installation secret key is ' +
        '@lectern/secrets.',
      from: { path: '^libs/', pathNot: ['^libs/webhooks/', '^libs/job-registry/'] },
      to: { path: '^libs/webhooks/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycles: between libraries (the rule that matters) and inside one.',
      from: { path: '^(libs|apps)/' },
      to: { circular: true },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment:
        'Production code does not import devDependencies (they are pruned from the image). The player bundle ' +
        'script runs at build time only.',
      from: { path: '^(libs|apps)/', pathNot: '^libs/player/build\\.mjs$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|var|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'default', 'node'],
      extensions: ['.ts', '.tsx', '.js', '.d.ts'],
      mainFields: ['module', 'main', 'types'],
    },
    reporterOptions: {
      archi: { collapsePattern: '^(libs|apps)/[^/]+' },
    },
  },
};
