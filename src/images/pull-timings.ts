// Where a pull's time went, for the log and bench/images: the registry round trips before the layers, each layer
// (its request, then one streamed pass: download, sha256 of the blob, inflate, sha256 of the tar and untar overlap,
// so only the hashing is timed apart), the root filesystem's assembly and the record. Nothing decides on it.
import type { Phase } from '../core/phases.ts';

export interface LayerTiming {
  digest: string;
  /** Bytes of the blob (compressed) and of its tar. */
  blobBytes: number;
  tarBytes: number;
  entries: number;
  /** Until the registry answered the blob's request (headers). */
  requestMs: number;
  /** From the answer until the layer was unpacked: download, hashes, inflate and untar, overlapping. */
  streamMs: number;
  /** Of `streamMs`, hashing the blob (its digest) and the tar (its diff id). */
  blobHashMs: number;
  tarHashMs: number;
  /** Writing its record and moving it into place. */
  publishMs: number;
}

export interface PullTimings {
  /** `manifest`, `config`, `room check`, `layers`, `rootfs`, `record`: in order, ending at each mark. */
  phases: Phase[];
  /** The layers this pull fetched itself (none for those in the store, or fetched by a pull it waited for). */
  layers: LayerTiming[];
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** `manifest 12, config 3, ... ms; layers: 13.1 MB -> 13.4 MB (200 entries) request 2 + stream 410 (sha256 8 + 9), ...` */
export function pullTimingsText(timings: PullTimings): string {
  const phases = timings.phases.map((p) => `${p.name} ${Math.round(p.ms)}`).join(', ');
  const layers = timings.layers.map(
    (l) => `${mb(l.blobBytes)} MB -> ${mb(l.tarBytes)} MB (${l.entries} entries) request ${Math.round(l.requestMs)} + stream ${Math.round(l.streamMs)} (sha256 ${Math.round(l.blobHashMs)} + ${Math.round(l.tarHashMs)}) + publish ${Math.round(l.publishMs)}`,
  );
  return `${phases} ms; layers: ${layers.join('; ') || 'none fetched'}`;
}
