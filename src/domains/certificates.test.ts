import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import acme from 'acme-client';
import { issuanceFailure } from './certificates.ts';

test('an ACME server that does not answer: the issuance fails after two quick retries, saying so', async () => {
  // A port that was free a moment ago: connections to it are refused.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const directoryUrl = `https://127.0.0.1:${port}/dir`;
  const client = new acme.Client({ directoryUrl, accountKey: (await acme.crypto.createPrivateKey()).toString() });
  const [, csr] = await acme.crypto.createCsr({ commonName: 'a.example', altNames: ['a.example'] });
  const error = await client
    .auto({ csr, termsOfServiceAgreed: true, skipChallengeVerification: true, challengeCreateFn: async () => undefined, challengeRemoveFn: async () => undefined })
    .then(() => undefined, (e: Error) => e);
  assert.ok(error, 'the order cannot succeed');
  assert.equal(issuanceFailure(error, directoryUrl), `no answer from the ACME server at ${directoryUrl}`);
  assert.equal(issuanceFailure(new Error('urn:ietf:params:acme:error:rejectedIdentifier'), directoryUrl), 'urn:ietf:params:acme:error:rejectedIdentifier');
});
