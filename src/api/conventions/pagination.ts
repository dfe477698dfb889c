// Cursor pagination: `limit` 1 to 200 (default 50), an opaque `cursor` signed by the installation so that a
// cursor the API did not issue, or one issued for another list, is refused with 422.
import { createHmac } from 'node:crypto';
import { Type, type TSchema } from 'typebox';
import { problem } from '../../core/problems.ts';
import { digestsEqual } from '../../core/secrets.ts';

const defaultPageLimit = 50;

export const PageQuery = {
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 200, default: defaultPageLimit, description: 'page size, 1 to 200' }),
  ),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'from next_cursor of the previous page' })),
};

/** The page size asked for; validation fills the default, which the static type cannot say. */
export function pageLimit(query: { limit?: number }): number {
  return query.limit ?? defaultPageLimit;
}

export function Page<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    next_cursor: Type.Optional(Type.String({ description: 'absent on the last page' })),
  });
}

export class CursorCodec {
  constructor(private readonly secret: string) {}

  private sign(scope: string, body: string): Buffer {
    return createHmac('sha256', this.secret).update(`${scope}\n${body}`).digest().subarray(0, 16);
  }

  encode(scope: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.sign(scope, body).toString('base64url')}`;
  }

  /** The position inside a cursor this API issued for `scope`; 422 for anything else. */
  decode<T>(scope: string, cursor: string): T {
    const [body, signature, extra] = cursor.split('.');
    if (body && signature && extra === undefined && digestsEqual(Buffer.from(signature, 'base64url'), this.sign(scope, body))) {
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
      } catch {
        // signed but unreadable cannot happen unless the secret leaked; refuse it the same way
      }
    }
    throw problem('invalid-cursor', 422, 'The cursor was not issued by this API for this list; start again without it.', {
      errors: [{ pointer: '/cursor', message: 'is not a cursor this list issued', in: 'query' }],
    });
  }
}

/** Cuts the extra row a store query fetched and makes the cursor for the next page from the last row kept. */
export function pageOf<Row, Item>(
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
  nextCursor: (last: Row) => string,
): { items: Item[]; next_cursor?: string } {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  const page: { items: Item[]; next_cursor?: string } = { items: kept.map(toItem) };
  if (more) page.next_cursor = nextCursor(kept[kept.length - 1]);
  return page;
}
