// The words people read for a custom domain's verification status and certificate state (docs/domains.md), the
// same in the CLI and the console.
import type { Domain } from './resources.ts';

export const verificationLabels: Record<Domain['verification']['status'], string> = {
  'not-checked': 'Not checked yet',
  checking: 'Checking',
  verified: 'Verified',
  failed: 'Failed',
  lapsed: 'Lapsed',
};

export const certificateLabels: Record<Domain['certificate']['state'], string> = {
  'waits-for-verification': 'Waits for verification',
  'being-issued': 'Being issued',
  issued: 'Issued',
  failed: 'Failed',
  covered: 'Covered',
  uploaded: 'Uploaded',
  'not-managed': 'Not managed',
};
