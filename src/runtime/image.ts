// Container images as the runtime runs them (spec 2.8, `container` service): the unpacked root filesystem of an
// image on this machine and the parts of its OCI config a replica uses. The image store (src/images) answers
// `PreparedImage`; the server asks for one through an `ImageSource` at Sync and pins it until the next Sync.

/**
 * The fields of an OCI image config's `config` object that a container replica uses, named as in the OCI image
 * spec (and Docker's), so an image store's parsed config plugs in as it is.
 */
export interface ImageConfig {
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  /** `NAME=value` entries. */
  Env?: string[] | null;
  WorkingDir?: string;
  /** `user`, `uid`, `user:group` or `uid:gid`; empty or absent means root under Docker. */
  User?: string;
  /** Keys like `8080/tcp`. */
  ExposedPorts?: Record<string, object> | null;
}

/** An image made ready on this machine. `rootfs` is shared by every replica of every workspace: never written. */
export interface PreparedImage {
  /** `sha256:...` of the manifest the image was resolved to. */
  digest: string;
  /** Directory holding the unpacked layers. */
  rootfs: string;
  config: ImageConfig;
  /** What this preparation fetched from the registry (none: every layer was on this machine already). */
  fetched?: { bytes: number; layers: number };
}

/** What a Plan asks for: the service's `image` as written, for the workspace's team (its registry credentials). */
export interface ImageLookup {
  image: string;
  teamId: number;
}

/** What a Sync asks for: the image, and the digest the reviewed plan showed for it. */
export interface ImageRequest extends ImageLookup {
  workspaceId: number;
  service: string;
  /** The digest the plan resolved the reference to: exactly this one is made ready, whatever the tag names now. */
  digest?: string;
}

/**
 * Resolves the image of a `container` service to a digest (at Plan: bounded in time, cached briefly) and makes it
 * ready (at Sync: pulls it when it is not in the store yet) for the replicas to run. Both throw a Problem naming the
 * image and the registry's answer when they cannot.
 */
export interface ImageSource {
  resolve(lookup: ImageLookup): Promise<{ digest: string }>;
  prepare(request: ImageRequest): Promise<PreparedImage>;
  /**
   * Starts making the image ready in the background (a Plan showed a digest to a caller who may Sync it), so that the
   * Sync finds it pulled or joins the pull under way. Runs nothing and pins nothing; a failure is only logged (the
   * Sync's own `prepare` says why). Optional: a source without it pulls at Sync only.
   */
  prefetch?(request: ImageRequest): void;
}
