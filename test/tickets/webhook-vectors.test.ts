// Webhook signatures against fixed vectors: HMAC-SHA256 values computed outside this code (with
// `printf '%s' '<timestamp>.<body>' | openssl dgst -sha256 -hmac '<secret>' -hex`), so a change to what is signed
// (the dot, the order, the encoding) fails here even when signing and verifying change together. The header
// names and the `v1=` form are the ones docs/commands.md documents for senders.
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER, verifyWebhook } from '../../src/tickets/webhook.ts';

const SECRET = 'a-shared-secret-of-16+';
const TS = 1795300000;
const BODY = '{"sourceTicketId":"T-1","processingStatus":"Success"}';
/** openssl over `1795300000.{"sourceTicketId":"T-1","processingStatus":"Success"}`. */
const MAC = 'c1be67ece7e07b2ba0cb22b4f45bd248d0b548d34357afdb222ad771cfd40f67';
/** openssl over `1795300000.` (an empty body). */
const MAC_EMPTY = '270c506a4b6ae022ab0d8f1ef95248122cde717a4132f5516f53bbc0ece5b380';

describe('webhook signatures: fixed vectors', () => {
  it('the documented header names', () => {
    expect(SIGNATURE_HEADER).toBe('X-SVC-Signature');
    expect(TIMESTAMP_HEADER).toBe('X-SVC-Timestamp');
  });

  it('signs `<timestamp>.<body>` as openssl does, for a string body, a Buffer and an empty body', () => {
    expect(signWebhook(SECRET, TS, BODY)).toBe(`v1=${MAC}`);
    expect(signWebhook(SECRET, TS, Buffer.from(BODY))).toBe(`v1=${MAC}`);
    expect(signWebhook(SECRET, TS, '')).toBe(`v1=${MAC_EMPTY}`);
  });

  it('verifies the openssl value (upper-case hex too, among several v1= values); refuses it for another body or time', () => {
    const now = TS * 1000;
    const headers = (signature: string, timestamp = String(TS)) => ({ signature, timestamp });
    expect(verifyWebhook(SECRET, headers(`v1=${MAC}`), Buffer.from(BODY), now).ok).toBe(true);
    expect(verifyWebhook(SECRET, headers(`v1=${MAC.toUpperCase()}`), Buffer.from(BODY), now).ok).toBe(true);
    expect(verifyWebhook(SECRET, headers(`v1=${MAC_EMPTY}, v1=${MAC}`), Buffer.from(BODY), now).ok).toBe(
      true,
    );
    expect(verifyWebhook(SECRET, headers(`v1=${MAC}`), Buffer.from(`${BODY} `), now).ok).toBe(false);
    expect(verifyWebhook(SECRET, headers(`v1=${MAC}`, String(TS + 1)), Buffer.from(BODY), now).ok).toBe(
      false,
    );
    expect(verifyWebhook(`${SECRET}x`, headers(`v1=${MAC}`), Buffer.from(BODY), now).ok).toBe(false);
  });
});
