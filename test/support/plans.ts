import { boundQuery, type EntityManager } from '@lectern/db';

/** One node of a PostgreSQL plan (`explain (format json)`), with the fields the plan checks read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Filter?: string;
  'Actual Rows'?: number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

const nodesOf = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodesOf)];

/**
 * Every node of a statement's plan, flattened. With `analyze` the statement runs (with `buffers`, the blocks it
 * read) inside a transaction that is rolled back, so a claim or an update can be measured without changing rows.
 */
export async function planNodes(
  em: EntityManager,
  statement: { sql: string; params: unknown[] },
  opts: { analyze?: boolean } = {},
): Promise<PlanNode[]> {
  const explain = async (tx: EntityManager) => {
    const [row] = await boundQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      tx,
      `explain (${opts.analyze ? 'analyze, buffers, ' : ''}format json) ${statement.sql}`,
      statement.params,
    );
    return nodesOf(row['QUERY PLAN'][0].Plan);
  };
  if (!opts.analyze) return explain(em);
  let nodes: PlanNode[] = [];
  await em
    .transactional(async (tx) => {
      nodes = await explain(tx);
      throw new Error('rollback');
    })
    .catch((err: Error) => {
      if (err.message !== 'rollback') throw err;
    });
  return nodes;
}
