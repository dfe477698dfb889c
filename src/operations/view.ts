// The Operation resource of spec 2.4 as clients see it (API answers and operation.updated events).
import type { OperationRow } from '../store/operations.ts';

export interface OperationView {
  id: string;
  kind: string;
  state: OperationRow['state'];
  target?: string;
  detail?: string;
  error?: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  finished_at?: string;
}

export function operationView(row: OperationRow): OperationView {
  return {
    id: row.id,
    kind: row.kind,
    state: row.state,
    target: row.target ?? undefined,
    detail: row.detail ?? undefined,
    error: row.error ?? undefined,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at?.toISOString(),
  };
}
