// Sizes of managed-service resources: MiB as a number, or a size with a binary unit (Mi, MiB, Gi, GiB).
import { sizePattern } from './names.ts';

const size = new RegExp(sizePattern);

/** The size in MiB: a number as it is, a text with a unit converted; undefined when it is not a size. */
export function sizeInMiB(value: number | string): number | undefined {
  if (typeof value === 'number') return value;
  const match = size.exec(value);
  if (match === null) return undefined;
  const amount = Number(value.slice(0, value.search(/ ?[MG]/)));
  return match[2].startsWith('G') ? amount * 1024 : amount;
}

/** Why a size cannot be used, or undefined when it is a whole number of MiB. */
export function sizeProblem(value: string): string | undefined {
  const mib = sizeInMiB(value);
  if (mib === undefined) return undefined;
  if (!Number.isSafeInteger(mib)) return Number.isInteger(mib) ? 'is too large' : `is ${mib} MiB, not a whole number of MiB`;
  return undefined;
}
