// The one error of image pulls: names the image, the registry and what the registry answered, so a Sync that
// fails on an image can say exactly why (spec 2.8, issue 15). `imageProblem` turns it into the API's problem.
import { problem, type Problem } from '../core/problems.ts';

export type ImageFailureReason =
  /** The text is not an image reference. */
  | 'invalid-reference'
  /** No connection, DNS failure, TLS failure or a timeout. */
  | 'unreachable'
  /** 404 for the tag or digest (`MANIFEST_UNKNOWN`, `NAME_UNKNOWN`). */
  | 'unknown'
  /** 401/403: no credentials, or the registry refused them. */
  | 'unauthorized'
  /** A manifest, config or layer whose bytes do not have the digest that named them. */
  | 'digest-mismatch'
  /** A schema, media type, compression or platform svc does not run (Docker schema 1, Windows, arm64 only...). */
  | 'unsupported'
  /** The image is broken: unreadable JSON, a layer whose tar escapes its root, too large a manifest. */
  | 'invalid'
  /** The image store would grow past its size limit (`--images-max-size`). */
  | 'store-full'
  /** Any other answer of the registry (5xx, 429, an unexpected status). */
  | 'registry-error'
  /** A request that went `--registry-stall-timeout` with (next to) nothing arriving. */
  | 'stalled'
  /** A pull that took longer than `--registry-pull-timeout`, however its bytes came. */
  | 'timed-out';

/** What the registry said, when it said something. */
export interface RegistryAnswer {
  status: number;
  /** The first error code of the registry's JSON body (`MANIFEST_UNKNOWN`, `UNAUTHORIZED`...). */
  code?: string;
  message?: string;
}

export class ImageFailure extends Error {
  constructor(
    readonly reason: ImageFailureReason,
    /** The image reference as written. */
    readonly image: string,
    /** The registry host (`docker.io`, `registry.example.com:5000`), when the reference could be read. */
    readonly registry: string | undefined,
    detail: string,
    readonly answer?: RegistryAnswer,
  ) {
    super(`${image}: ${detail}${answer ? ` (${describeAnswer(answer)})` : ''}`);
    this.name = 'ImageFailure';
  }
}

export function describeAnswer(answer: RegistryAnswer): string {
  const said = [answer.code, answer.message].filter(Boolean).join(' ');
  return `the registry answered ${answer.status}${said ? ` ${said}` : ''}`;
}

const statusOf: Record<ImageFailureReason, number> = {
  'invalid-reference': 422,
  unreachable: 502,
  unknown: 422,
  unauthorized: 422,
  'digest-mismatch': 502,
  unsupported: 422,
  invalid: 422,
  'store-full': 507,
  'registry-error': 502,
  stalled: 504,
  'timed-out': 504,
};

/** The API's problem for a failed pull or resolve: `image-unavailable` with the image, registry and answer. */
export function imageProblem(failure: ImageFailure): Problem {
  return problem('image-unavailable', statusOf[failure.reason], failure.message, {
    extra: {
      image: failure.image,
      registry: failure.registry,
      reason: failure.reason,
      ...(failure.answer ? { registry_answer: failure.answer } : {}),
    },
  });
}
