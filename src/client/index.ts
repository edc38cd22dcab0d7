// Public face of the service client.
export { type ClientOptions, createClient, displayUrl, type SvcClient } from './client.ts';
export { KNOWN_ENUMS } from './enums.ts';
export { parseRetryAfter, SvcHttpError, SvcLimitError, SvcNetworkError, SvcTimeoutError } from './errors.ts';
export { jwtExpiryMs, type SessionProvider } from './session.ts';
