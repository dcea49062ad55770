import { MAX_PATTERN_LENGTH } from '../domain/pattern.js';

/**
 * The largest request line and headers the HTTP server reads (Node's `maxHeaderSize`, 16 KiB by default); beyond it
 * Node answers 431, with no body, before the service sees the request. It holds the longest path parameter the
 * OpenAPI document allows — a like pattern of MAX_PATTERN_LENGTH characters, each up to 4 UTF-8 bytes written as 12
 * (`%F0%9F%98%80`), 48 KiB — plus Node's default for the rest of the path, the query and the headers: 64 KiB.
 */
export const MAX_REQUEST_HEAD_BYTES = MAX_PATTERN_LENGTH * 12 + 16 * 1024;
