/**
 * The one error type the product throws on purpose. Its code decides the HTTP status; anything
 * else that escapes a handler is logged and answered with a generic 500 that leaks nothing.
 */
export const errorStatus = {
  BAD_REQUEST: 400,
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  BAD_SIGNATURE: 401,
  FORBIDDEN: 403,
  NOT_STARTED: 403,
  ENDED: 403,
  CSRF: 403,
  /** A reservation-only flash sale, and this user holds no reservation (docs/fair-sale.md). */
  NOT_RESERVED: 403,
  /** A draw sale: reserved, but not among the drawn. */
  NOT_DRAWN: 403,
  /** A sale behind the waiting room, and the grab or token request carries no valid ticket or token (docs/fair-sale.md#the-grab-token). */
  NEED_TICKET: 403,
  /** A grab token whose nonce an earlier grab already spent. */
  TOKEN_USED: 403,
  /** The waiting room has not reached this ticket yet. */
  NOT_ADMITTED: 403,
  /** The bot gate's proof of work is missing, wrong, expired, someone else's or already used. */
  POW_FAILED: 403,
  /** A merchant/admin phone tried to log in by SMS code: they log in with their password. */
  PASSWORD_REQUIRED: 403,
  /** The payment provider took no money (declined): the buyer may try again. */
  PAYMENT_FAILED: 402,
  NOT_FOUND: 404,
  CONFLICT: 409,
  ORDER_STATE: 409,
  PAY_EXPIRED: 409,
  ALREADY_BOUGHT: 409,
  /** A flash-sale unit this user cancelled (or let time out) is not theirs to grab again. */
  FORFEITED: 409,
  /** Too many cancelled or unpaid orders of one normal voucher by one user in 24 h. */
  CANCEL_LIMIT: 409,
  SOLD_OUT: 410,
  /** Waitlist (docs/fair-sale.md#waitlist): the sale still has open stock, so grab instead of waiting. */
  NOT_SOLD_OUT: 409,
  WAITLIST_FULL: 409,
  /** A bucketed flash sale (docs/buckets.md) has no waitlist. */
  WAITLIST_UNSUPPORTED: 409,
  /** A claim without an open offer of a returned unit. */
  NO_OFFER: 409,
  /** An upload past the user's quota of stored images (UPLOAD_MAX_PER_USER). */
  UPLOAD_QUOTA: 409,
  OFFER_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  CODE_INVALID: 400,
  CODE_EXPIRED: 400,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Field-level messages for forms (path → message). */
  readonly fields?: Record<string, string>;
  /** Seconds, for 429 responses. */
  readonly retryAfter?: number;

  constructor(code: ErrorCode, message: string, extra: { fields?: Record<string, string>; retryAfter?: number } = {}) {
    // No stack: an AppError is an answer, not a fault. errorReply reads its code and message only,
    // and capturing a stack was 9 % of the web process's CPU in a sold-out storm (docs/hot-server.md#errors-are-answers).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.fields = extra.fields;
    this.retryAfter = extra.retryAfter;
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what}不存在`);
