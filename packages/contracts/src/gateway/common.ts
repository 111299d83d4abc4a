// Limits several of the gateway's contracts share.

/** Largest amount of money (currency units) the API accepts: keeps micros a safe integer. */
export const MAX_UNITS = 1_000_000_000;

/** Ids and other integer columns are 32-bit on every store. */
export const MAX_INT32 = 2_147_483_647;
