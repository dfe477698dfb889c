// Queuing an operation: a row in `pending`, announced (operation.updated) in the caller's transaction.
import { randomUUID } from 'node:crypto';
import { publishEvent } from '../events/publish.ts';
import type { Queryable } from '../store/database.ts';
import { insertOperation, type OperationRow } from '../store/operations.ts';
import { operationView } from './view.ts';

export interface NewOperation {
  kind: string;
  target: string;
  teamId: number | null;
  createdBy: number | null;
  input: Record<string, unknown>;
  detail?: string;
  at: Date;
}

export async function enqueueOperation(db: Queryable, operation: NewOperation): Promise<OperationRow> {
  const row = await insertOperation(db, { id: randomUUID(), ...operation });
  await publishEvent(db, { type: 'operation.updated', at: row.created_at.toISOString(), team_id: row.team_id ?? undefined, operation: operationView(row) });
  return row;
}
